/* infer.h: the public C API of libinfer, the only header the CLI and services include.
 *
 * Contracts:
 * - Every function that can fail returns an infer_status; on failure a readable
 *   message (what went wrong and where) is available from infer_last_error() on the
 *   same thread until the next failing call.
 * - Every *_create / *_load has a *_release that accepts NULL.
 * - Each output pointer's owner is written beside it.
 */
#ifndef INFER_H
#define INFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INFER_VERSION_MAJOR 0
#define INFER_VERSION_MINOR 1
#define INFER_VERSION_PATCH 0

#if defined(_WIN32)
#define INFER_API
#else
#define INFER_API __attribute__((visibility("default")))
#endif

/* Status codes. The CLI maps them to its exit codes (see README). */
typedef enum infer_status {
  INFER_OK = 0,
  INFER_ERR_INVALID_ARGUMENT = 1, /* bad call or bad option value */
  INFER_ERR_INVALID_MODEL = 2,    /* malformed or inconsistent model */
  INFER_ERR_INVALID_INPUT = 3,    /* wrong input: file, shape or dtype */
  INFER_ERR_IO = 4,               /* a file could not be read or written */
  INFER_ERR_UNSUPPORTED = 5,      /* op, attribute, dtype or feature not supported */
  INFER_ERR_DEVICE = 6,           /* no device, or a device/library call failed */
  INFER_ERR_OUT_OF_MEMORY = 7,
  INFER_ERR_RUNTIME = 8, /* failure while running (incl. a failed context) */
  INFER_ERR_INTERNAL = 9
} infer_status;

/* Element types use ONNX TensorProto.DataType numbers. */
typedef enum infer_dtype {
  INFER_DTYPE_UNDEFINED = 0,
  INFER_DTYPE_FLOAT32 = 1,
  INFER_DTYPE_UINT8 = 2,
  INFER_DTYPE_INT8 = 3,
  INFER_DTYPE_UINT16 = 4,
  INFER_DTYPE_INT16 = 5,
  INFER_DTYPE_INT32 = 6,
  INFER_DTYPE_INT64 = 7,
  INFER_DTYPE_STRING = 8, /* never a valid tensor dtype here */
  INFER_DTYPE_BOOL = 9,
  INFER_DTYPE_FLOAT16 = 10,
  INFER_DTYPE_FLOAT64 = 11,
  INFER_DTYPE_UINT32 = 12,
  INFER_DTYPE_UINT64 = 13,
  INFER_DTYPE_BFLOAT16 = 16
} infer_dtype;

#define INFER_MAX_RANK 8

/* A dense, C-ordered tensor in host memory. `data` is owned by whoever filled
 * the struct; each function below says who that is. */
typedef struct infer_tensor {
  infer_dtype dtype;
  int rank;
  int64_t dims[INFER_MAX_RANK];
  void *data;
} infer_tensor;

/* Message of the last failure on this thread; owned by the library, valid until
 * the next failing call on this thread. Never NULL. */
INFER_API const char *infer_last_error(void);
INFER_API const char *infer_status_name(infer_status s);
INFER_API const char *infer_dtype_name(infer_dtype t);
/* Bytes per element, 0 for an unknown or unsupported dtype. */
INFER_API size_t infer_dtype_size(infer_dtype t);
/* "MAJOR.MINOR.PATCH" of the linked library; static storage. */
INFER_API const char *infer_version(void);

/* ---- tensors and tensor files ---------------------------------------- */

/* Number of elements; -1 when a dim is negative or the product overflows. */
INFER_API int64_t infer_tensor_count(const infer_tensor *t);
/* Reads a TensorProto (.pb) or NumPy (.npy) file, chosen by content.
 * On success *out holds malloc'ed data owned by the caller (infer_tensor_clear)
 * and, if name_out is not NULL, *name_out a malloc'ed name ("" when the file has
 * none) owned by the caller (free). */
INFER_API infer_status infer_tensor_read_file(const char *path, infer_tensor *out,
                                              char **name_out);
/* Writes t as a NumPy .npy (version 1.0, little-endian, C order). */
INFER_API infer_status infer_tensor_write_npy(const char *path, const infer_tensor *t);
/* Writes t as an ONNX TensorProto .pb named `name` (may be NULL). */
INFER_API infer_status infer_tensor_write_pb(const char *path, const infer_tensor *t,
                                             const char *name);
/* Element i of a tensor of any numeric dtype, as a double. */
INFER_API double infer_tensor_get(const infer_tensor *t, int64_t i);
/* Stores v (converted to the tensor's dtype, C conversion rules) at element i. */
INFER_API void infer_tensor_set(infer_tensor *t, int64_t i, double v);
/* Frees t->data and zeroes t. Accepts NULL. */
INFER_API void infer_tensor_clear(infer_tensor *t);

/* ---- build options ----------------------------------------------------- */

typedef struct infer_options infer_options;
typedef enum infer_device { INFER_DEVICE_CPU = 0, INFER_DEVICE_CUDA = 1 } infer_device;
typedef enum infer_precision {
  INFER_PRECISION_FP32 = 0,
  INFER_PRECISION_TF32 = 1,
  INFER_PRECISION_FP16 = 2
} infer_precision;

/* Devices of that kind usable by this build: 1 for the CPU; for CUDA the number of
 * visible GPUs, 0 when there is none or the build has no CUDA backend. */
INFER_API int infer_device_count(infer_device d);

/* Owned by the caller; release with infer_options_release. */
INFER_API infer_status infer_options_create(infer_options **out);
INFER_API void infer_options_release(infer_options *o);
INFER_API infer_status infer_options_set_device(infer_options *o, infer_device d, int index);
/* The precision of CUDA engines (default fp32). CPU engines compute in fp32 whatever is
 * set here (the infer command warns when --precision is given with --device cpu). */
INFER_API infer_status infer_options_set_precision(infer_options *o, infer_precision p);
/* Binds the dims of input `name`; a dim of -1 keeps the model's own. */
INFER_API infer_status infer_options_set_input_shape(infer_options *o, const char *name,
                                                     int rank, const int64_t *dims);
/* The same, for the index-th input (graph inputs that are not initializers,
 * in model order); a name given with the setter above wins. */
INFER_API infer_status infer_options_set_input_shape_at(infer_options *o, int index, int rank,
                                                        const int64_t *dims);
/* Fixes the index-th input to the value t (copied) at build time, like a
 * TensorRT shape tensor: shapes that depend on it become static (the CUDA backend
 * needs that), and later infer_context_set_input calls for it must pass the same
 * value. */
INFER_API infer_status infer_options_set_input_constant_at(infer_options *o, int index,
                                                           const infer_tensor *t);
/* Value for every symbolic first (batch) dim not bound otherwise. */
INFER_API infer_status infer_options_set_batch(infer_options *o, int64_t batch);
/* 8-bit image input: input `index` (counted as for infer_options_set_input_shape_at),
 * which the model takes as float32 [N, C, H, W], is fed as uint8 [N, H, W, C] instead
 * (channels last, as image decoders give pixels: a quarter of the bytes to move). The
 * engine computes y = (x / 255 - mean[c]) / std[c] in float32 for every element, as
 * torchvision's ToTensor and Normalize do, and the layout change: on the GPU in the
 * first kernel of the run (an fp16 channels-last engine takes the NHWC bytes straight
 * into the first convolution's layout, with no transpose), on the CPU in C at the start
 * of each run.
 * - channels: the model's C, 1 to 16 (checked at build); mean and std: `channels`
 *   values each (copied; NULL: mean 0 and std 1, i.e. x / 255 only); std > 0 and all
 *   values finite, else INFER_ERR_INVALID_ARGUMENT. channels 0 turns the option off.
 * - From then on the engine's input `index` IS the uint8 tensor: infer_engine_input_info
 *   reports uint8 [N, H, W, C], and infer_context_set_input, infer_context_input_buffer
 *   and infer_context_bind_input_device take it. A flexible batch works as for the
 *   float input.
 * - An input that is not float32 of rank 4 with C channels, or that is fixed by
 *   infer_options_set_input_constant_at, fails the build with INFER_ERR_INVALID_ARGUMENT
 *   naming it. */
INFER_API infer_status infer_options_set_input_image(infer_options *o, int index, int channels,
                                                     const float *mean, const float *std);
/* 0 quiet, 1 verbose: the passes and the plan are described on the log. */
INFER_API infer_status infer_options_set_verbose(infer_options *o, int level);
/* CUDA: capture each context's run into a CUDA graph and replay it (default 1). */
INFER_API infer_status infer_options_set_cuda_graph(infer_options *o, int enabled);
/* CUDA: synchronize after every step so a failing kernel is named (default 0). Slow.
 * (The infer command turns it on when the environment has INFER_SYNC=1.) */
INFER_API infer_status infer_options_set_sync_each_op(infer_options *o, int enabled);
/* Time every step of every run (see infer_step_profile; turns CUDA graphs off). */
INFER_API infer_status infer_options_set_profile(infer_options *o, int enabled);
/* CUDA (CPU engines ignore it): keep the algorithms measured at build time in the text
 * file `path` (copied; NULL turns the cache off, the default; "" is refused) and reuse
 * them in later builds, which then skip the search. Entries are keyed by op shape and precision;
 * the file records the GPU, driver, CUDA runtime, cuDNN and cuBLAS versions, and a
 * file made for another environment, or unreadable, corrupt or truncated, is ignored
 * with a warning on the log and rewritten: the cache never fails a build. Hits and
 * misses are reported in infer_build_timing. */
INFER_API infer_status infer_options_set_cache(infer_options *o, const char *path);
/* CUDA: the most scratch memory (bytes) one step's algorithm may use; the build then
 * chooses among the cuDNN/cuBLAS algorithms that fit, and the context's workspace is
 * the largest need of the steps. 0 (default) means 1 GiB. Negative is refused. The
 * CPU's scratch is what its ops need and is not limited. */
INFER_API infer_status infer_options_set_workspace_limit(infer_options *o, int64_t bytes);
/* The most memory, in bytes, that an engine built with these options and all of its
 * contexts together may take, on the host and on the device (0: no limit, the default;
 * negative is refused). Counted: the model file while it is decoded, the weights, the
 * constants folded at build and their scratch, the device copy of the weights, and per
 * context the arena, the workspace, input/output staging (host, pinned for CUDA) and a
 * CPU run's blocks for shapes known only at run time. Each is checked BEFORE it is
 * allocated: infer_engine_load, infer_context_create (or a run of a dynamic CPU graph)
 * then fail with INFER_ERR_OUT_OF_MEMORY and a message naming what needed how many
 * bytes, what is in use and the limit. Small bookkeeping (graph, plan, op tables) and
 * the CUDA libraries' own handles are not counted. Independently of any limit, one
 * tensor may hold at most 2^31 elements: shape inference refuses a larger one with
 * INFER_ERR_OUT_OF_MEMORY before anything is allocated. */
INFER_API infer_status infer_options_set_memory_limit(infer_options *o, int64_t host_bytes,
                                                      int64_t device_bytes);
/* Log sink for verbose output and for warnings (written at every verbosity, prefixed
 * "warning: "); NULL (default) writes to stderr. */
typedef void (*infer_log_fn)(void *user, const char *line);
INFER_API infer_status infer_options_set_log(infer_options *o, infer_log_fn fn, void *user);
/* The rare settings, as key/value entries (both copied; value NULL removes the entry).
 * An unknown key or a value it does not take is refused with INFER_ERR_INVALID_ARGUMENT
 * naming the known keys or values. The library reads no environment variables; these
 * are the knobs (the infer command maps the INFER_* variables in brackets onto them):
 *   channels_last    auto (default) | 1 | 0: run convolutions and what lies between them
 *                    on NHWC data (auto: fp16 CUDA builds); 1 on the CPU checks the pass
 *                    [INFER_CHANNELS_LAST]
 *   cuda.poison      1: fill the device arena and outputs with NaN bytes before each run,
 *                    so elements no step writes show up (tests) [INFER_POISON]
 *   cuda.conv_impl   NAME: every convolution the implementation NAME takes runs through
 *                    it, untimed, without the algorithm cache (tests; cudnn+epi, cudnn-fused
 *                    or an alternative's name) [INFER_CONV_IMPL]
 *   cuda.cudnn_rtc   1: let the cuDNN graph-API search try runtime-compiled engines
 *                    (slow builds); default 0, except for int8 convolutions (int8=1),
 *                    whose fused engines cuDNN offers only so; 0 keeps them out too
 *                    [INFER_CUDNN_RTC]
 *   cuda.nan_exact   1: keep activations out of library calls (cuDNN's fused convolution
 *                    and graph engines, cuBLASLt's ReLU/GELU epilogues) and apply them in
 *                    the engine's own kernels, which give NaN and infinities as the
 *                    unfused ONNX ops do; 0 (default) lets the build time them fused
 *                    (the libraries' NaN handling is theirs) [INFER_NAN_EXACT]
 *   cuda.conv_bias_first 1 (default): fp16 convolutions that run as cuDNN's convolution
 *                    and our epilogue kernel add the bias in cuDNN's float32 accumulation
 *                    (y = b, then the convolution with beta 1), so conv + bias is rounded
 *                    to fp16 once, as in every other implementation; the build times the
 *                    variant so, and picks another where its extra pass costs. 0 stores
 *                    conv(x) in fp16 and adds the bias in the epilogue, which loses what a
 *                    cancelling bias leaves (docs/precision.md)
 *   cuda.host_fallback 1 (default): a step whose op has no GPU implementation, or whose
 *                    GPU kernel refuses that instance (an attribute or dtype it does
 *                    not take), runs its CPU reference on the host, in the stream's order
 *                    (its inputs copied off the device into pinned memory, a host
 *                    function, its outputs copied back; no host wait, CUDA graphs keep
 *                    it). --verbose counts such steps as host-fallback; each costs two
 *                    transfers and a host pass. 0 refuses the build instead, naming the op
 *   cuda.dynamic_output_bytes N: bytes of pinned host memory each graph output of a
 *                    shape known only at run may take (default 8388608, 8 MiB); a run
 *                    whose output is larger fails naming the output and this key
 *   outline_dynamic  auto (default) | 1 | 0: move the nodes whose shapes depend on
 *                    run-time data (NonZero, NonMaxSuppression, ...) and those between
 *                    them into one host region (auto: CUDA builds with cuda.host_fallback
 *                    on, where that region runs on the host and every other step keeps
 *                    fixed shapes); 1 on the CPU checks the pass; 0 leaves them, which a
 *                    CUDA build refuses
 *   int8             1: a QDQ model's convolutions on symmetric int8 tensors (per-tensor
 *                    activations with zero point 0, per-channel weights) run as int8
 *                    convolutions (Int8Conv: on CUDA fp16 builds, cuDNN's int8 engines
 *                    with the scale, bias, residual and activation fused; on the CPU the
 *                    reference, as a check); 0 (default) runs them on dequantized floats
 *   cuda.attention_impl flash | cudnn: which runs a fused attention in float16, our
 *                    flash kernel or cuDNN's SDPA (where cuDNN takes the problem); unset,
 *                    both are timed at build and the faster kept
 *   keep_values      1: no intermediate shares memory with another, so every value a
 *                    step writes can be read after the run (infer_context_read_value,
 *                    infer_compare_values); the run itself is unchanged, the arena is
 *                    the naive sum of intermediates
 *   precision.fp32_ops  OP,...: fp16 builds (CUDA fp16, cpu.fp16_storage) compute and
 *                    store the nodes of these ONNX op types in float32, the passes placing
 *                    Casts around them; "auto" (the default) is the overflow policy: Pow,
 *                    Exp, ReduceSumSquare and any reduction of a kept value; "none" keeps
 *                    nothing; "auto,LayerNormalization" adds to it. A name no op has is
 *                    refused (docs/precision.md) [infer --fp32-ops]
 *   precision.fp32_nodes NAME,...: the same for the nodes of these names (a name no node
 *                    of the model has is refused at build) [infer --fp32-nodes]
 *   cpu.fp16_storage 1: CPU engines round every float32 value to float16 where it is
 *                    stored (weights, inputs, each step's outputs) and compute in float32
 *                    between: the error fp16 storage alone costs, to hold a GPU fp16
 *                    engine's error against (docs/precision.md)
 *   test.fail_step   K: every context's run fails at step K the way an op failing there
 *                    would (tests of failure handling; past the last step: the last)
 *   test.fail_after  N: ... in its (N+1)-th run (default 0) */
INFER_API infer_status infer_options_set_config(infer_options *o, const char *key,
                                                const char *value);

/* ---- engines ------------------------------------------------------------ */

typedef struct infer_engine infer_engine;

/* Loads, validates, optimizes and plans a model. opts may be NULL (defaults:
 * cpu, fp32). *out is owned by the caller: infer_engine_release. */
INFER_API infer_status infer_engine_load(const char *model_path, const infer_options *opts,
                                         infer_engine **out);
INFER_API void infer_engine_release(infer_engine *e);

INFER_API int infer_engine_input_count(const infer_engine *e);
INFER_API int infer_engine_output_count(const infer_engine *e);
/* Name, dtype and shape of an input/output; `info.data` is NULL. The name is owned
 * by the engine. An output whose shape depends on run-time input values has dims
 * of -1 (and, where not even its type is known before a run, dtype
 * INFER_DTYPE_UNDEFINED). Returns INFER_ERR_INVALID_ARGUMENT for a bad index. */
INFER_API infer_status infer_engine_input_info(const infer_engine *e, int index,
                                               const char **name, infer_tensor *info);
INFER_API infer_status infer_engine_output_info(const infer_engine *e, int index,
                                                const char **name, infer_tensor *info);
/* Largest batch a run takes when the engine was built with infer_options_set_batch
 * for a model with a symbolic batch dim: inputs with that dim then accept any
 * batch from 1 to it (all in one run the same), and outputs have the run's batch.
 * A CUDA engine computes all rows of the build batch and hands out the first ones,
 * which needs every row computed from its own input rows only; for a model that
 * may mix rows (e.g. it computes shapes from the batch size) it runs only the build
 * batch, and this returns 0, as for engines that run only the shapes they were
 * built for. --verbose says which and why. */
INFER_API int64_t infer_engine_max_batch(const infer_engine *e);
/* Index of the input/output called `name`, or -1. */
INFER_API int infer_engine_input_index(const infer_engine *e, const char *name);
INFER_API int infer_engine_output_index(const infer_engine *e, const char *name);

/* ---- contexts: per-thread execution state ----------------------------------
 *
 * Threads: an engine is immutable once built and may be shared by any number of
 * threads, each with its own context. A context must be used by one thread at a
 * time; infer_context_run refuses (INFER_ERR_INVALID_ARGUMENT) a call that overlaps
 * a run of the same context on another thread, and other overlapping calls on one
 * context are undefined. Several contexts of one engine share its weights (never
 * copied per context); each holds its own intermediates, scratch and staging
 * (infer_engine_memory), and on CUDA its own stream: their runs proceed concurrently on
 * the device, the copies of one under the compute of another. */

typedef struct infer_context infer_context;

/* *out owned by the caller: infer_context_release (before the engine's). */
INFER_API infer_status infer_context_create(infer_engine *e, infer_context **out);
INFER_API void infer_context_release(infer_context *c);
/* Copies `t` into the context (into the input's buffer, infer_context_input_buffer).
 * Its dtype and shape must match the engine's input (infer_engine_input_info: uint8
 * NHWC for an image input), except that the batch dim may be smaller (see
 * infer_engine_max_batch); the message names the input, expected and actual on a
 * mismatch. */
INFER_API infer_status infer_context_set_input(infer_context *c, int index,
                                               const infer_tensor *t);
/* One run, waited for: infer_context_enqueue then infer_context_wait (below). */
INFER_API infer_status infer_context_run(infer_context *c);
/* INFER_OK while the context is usable; after a device error inside a run it
 * returns that failure for good (a service can then report itself unready). The
 * message is available from infer_last_error() on this thread after the call.
 * On the CPU a failed run is not sticky: the status stays INFER_OK and the next
 * run with valid inputs succeeds; outputs are unreadable until then. */
INFER_API infer_status infer_context_status(const infer_context *c);
/* After a successful run (or wait): *out describes output `index`; out->data is owned
 * by the context and valid until the next run (enqueue) or release. An output bound to device
 * memory (below) is not readable here: INFER_ERR_INVALID_ARGUMENT, naming it. */
INFER_API infer_status infer_context_get_output(infer_context *c, int index,
                                                infer_tensor *out);

/* Asynchronous runs: infer_context_enqueue starts a run of the inputs set (or written in
 * place, or bound) and returns; infer_context_wait waits until it is done and returns its
 * status. infer_context_run is the two in one call.
 * - enqueue fails only when the run cannot start: an input not set, a context failed
 *   for good, a run already in flight (enqueue twice without a wait:
 *   INFER_ERR_INVALID_ARGUMENT), an overlapping call from another thread. Then nothing
 *   is in flight and there is nothing to wait for. After a successful enqueue call wait
 *   exactly once: it returns the run's status (every failure of the run itself is
 *   reported there, with its message on the waiting thread) and makes the outputs
 *   readable. wait with no run in flight is INFER_ERR_INVALID_ARGUMENT.
 * - CUDA: enqueue puts the whole run (input copies and casts, every step, output
 *   copies) on the context's stream and returns without waiting for the device; wait
 *   synchronizes that stream. The calling thread is free meanwhile.
 * - CPU: enqueue computes the whole run before it returns (synchronously); wait
 *   returns its status at once. Code written for either device works on both.
 * - While a run is in flight (from a successful enqueue to its wait) only
 *   infer_context_wait, infer_context_status and infer_context_release may be called on
 *   the context; every other call on it (set_input, the buffers, bindings, get_output,
 *   timing, profile, enqueue, run) is refused with INFER_ERR_INVALID_ARGUMENT saying a
 *   run is in flight. The caller must not write an input buffer (below) or a bound
 *   input while a run is in flight: the device may be reading it. Release waits for a
 *   run in flight and drops its result.
 * - enqueue and its wait may be called from different threads when the caller orders
 *   them (e.g. through a mutex-protected queue): the context is still used by one
 *   thread at a time. */
INFER_API infer_status infer_context_enqueue(infer_context *c);
INFER_API infer_status infer_context_wait(infer_context *c);

/* In-place buffers: host memory owned by the context that the caller writes inputs into
 * and reads outputs from, with no copy by the library: on CUDA the pinned staging the
 * device copies read and write, on the CPU the input's and output's own slots in the
 * context's memory (an image input's uint8 staging). The pointer and size never change
 * for the context's life; the memory is freed by infer_context_release.
 * - infer_context_input_buffer: *ptr and *bytes of input `index`, in the engine's dtype
 *   and shape (infer_engine_input_info; C order; uint8 NHWC for an image input). The
 *   call makes the buffer the input's source: every later run reads the input from the
 *   buffer's contents when it is enqueued, until infer_context_set_input (which copies
 *   into the same memory, so both may be mixed) or a device binding takes over. A
 *   device binding of the input is dropped. Write the whole input before the first run;
 *   runs never write the buffer, so its contents stay from one run to the next. A run
 *   from the buffer takes the engine's full shape (the build batch, for a flexible
 *   batch).
 * - infer_context_output_buffer: *ptr and *bytes of output `index` at the engine's shape
 *   (model dtype, C order). After each successful wait it holds that run's output (the
 *   first rows, for a smaller flexible batch) until the next enqueue; the same bytes
 *   infer_context_get_output points at. Read it only. Refused (INFER_ERR_INVALID_ARGUMENT)
 *   for an output bound to device memory or whose shape is known only at run time.
 * - Write and read them only while no run is in flight: before the enqueue, after
 *   the wait.
 * - An input fixed by infer_options_set_input_constant_at has no buffer
 *   (INFER_ERR_INVALID_ARGUMENT). */
INFER_API infer_status infer_context_input_buffer(infer_context *c, int index, void **ptr,
                                                  int64_t *bytes);
INFER_API infer_status infer_context_output_buffer(infer_context *c, int index,
                                                   const void **ptr, int64_t *bytes);

/* Device-memory binding (like ONNX Runtime's IoBinding): input/output `index` is
 * read from / written to caller memory on the GPU, with no host copy.
 * - device_ptr is a CUDA device pointer (cudaMalloc'ed or managed) on the engine's
 *   GPU, holding the whole tensor in the model's dtype and C-order layout at the
 *   engine's shape (see infer_engine_input_info / output_info). `bytes` must equal
 *   that size; otherwise INFER_ERR_INVALID_ARGUMENT naming the expected and actual
 *   sizes. A pointer that is not device memory of that GPU is refused the same way.
 * - The binding lasts until changed: every later infer_context_run reads the input
 *   from (writes the output to) that memory on the context's own stream, which does
 *   not wait for the caller's streams: finish writing a bound input (synchronize the
 *   stream that wrote it) before the run. When the run returns, the output is there.
 *   The caller owns the memory and keeps it alive and its input contents unchanged
 *   while a run may use it.
 * - device_ptr NULL unbinds: the input goes back to the host data last given to
 *   infer_context_set_input (if none, the run fails as for an unset input), the
 *   output to infer_context_get_output from the next run on (the output of a run
 *   that wrote device memory is not readable there: INFER_ERR_RUNTIME).
 *   infer_context_set_input on a bound input unbinds it too. Unbinding succeeds on
 *   any engine.
 * - Precision: the input is cast from the bound memory (fp16 runs of float32
 *   models) or copied device-to-device into the context; the output is cast or
 *   copied straight into the bound memory.
 * - Binding another pointer makes the next run capture its CUDA graph again (a
 *   captured graph holds the pointers): bind buffers once and refill them for the
 *   fastest runs. infer_context_timing's h2d_ms/d2h_ms then time the device copies.
 * - A CPU engine returns INFER_ERR_UNSUPPORTED (device memory binding needs a CUDA
 *   engine), as does an input fixed by infer_options_set_input_constant_at. */
INFER_API infer_status infer_context_bind_input_device(infer_context *c, int index,
                                                       const void *device_ptr, int64_t bytes);
INFER_API infer_status infer_context_bind_output_device(infer_context *c, int index,
                                                        void *device_ptr, int64_t bytes);

/* Times of the last successful run, in milliseconds. On CUDA they come from events
 * around the input copies (with the input casts), the steps, and the output copies
 * (with the output casts), device-to-device ones for bound memory included; on the
 * CPU only compute_ms is set (host clock). */
typedef struct infer_run_timing {
  double h2d_ms, compute_ms, d2h_ms;
} infer_run_timing;
INFER_API infer_status infer_context_timing(const infer_context *c, infer_run_timing *t);

/* Per-step profile. With infer_options_set_profile(o, 1) every run also times each
 * step on its own (CUDA: events around each step, with the CUDA graph off, so the
 * profiled run is not the graph-replayed one; CPU: host clock). */
typedef struct infer_step_profile {
  const char *node;  /* node name (may be ""); owned by the engine */
  const char *op;    /* op type */
  const char *impl;  /* what runs it: "cpu", "cudnn", "cublas" or "kernel" */
  double ms;         /* time of the step in the last run */
  double flops;      /* arithmetic of the step (multiply-add = 2), an estimate */
  double bytes;      /* bytes its inputs and outputs occupy: the least it moves */
} infer_step_profile;
INFER_API int infer_context_profile_count(const infer_context *c);
INFER_API infer_status infer_context_profile_step(const infer_context *c, int i,
                                                  infer_step_profile *p);

/* Memory an engine and each of its contexts hold, in bytes. */
typedef struct infer_memory_info {
  int64_t weights;   /* constants on the run device */
  int64_t arena;     /* one context's intermediates (planned) */
  int64_t workspace; /* one context's scratch */
  int64_t naive;     /* the sum of all intermediates, unplanned */
} infer_memory_info;
INFER_API infer_status infer_engine_memory(const infer_engine *e, infer_memory_info *m);

/* Where build time went, in milliseconds: reading and decoding the file, the graph
 * passes (validation, shape inference, folding, planning), and the device build
 * (weights upload, algorithm search). With infer_options_set_cache, the algorithm
 * choices found in the cache (hits) and searched for (misses); both 0 without one. */
typedef struct infer_build_timing {
  double load_ms, passes_ms, device_ms;
  int algo_cache_hits, algo_cache_misses;
} infer_build_timing;
INFER_API infer_status infer_engine_build_timing(const infer_engine *e, infer_build_timing *t);

/* What this build and machine offer and what is wrong with them: build options,
 * CUDA driver and runtime versions (and whether they fit), every GPU (compute
 * capability, memory, SMs, whether this build has code for it), cuDNN and cuBLAS
 * versions, and a short fp16 tensor-core matrix test with its TFLOP/s. Each problem
 * comes with its fix. *report is malloc'ed text owned by the caller (free). */
INFER_API infer_status infer_diagnose(char **report);

/* ---- intermediate values and precision comparison ------------------------ */

/* After a successful run of an engine built with config keep_values=1: the value called
 * `name` (an ONNX value name: a graph input or any value a step wrote; values that
 * fusion removed or folding made constant are not there) as float32 in the model's
 * layout (NCHW where the GPU ran it NHWC), widened from the run's storage (float16 in
 * fp16 runs). *out holds malloc'ed data owned by the caller (infer_tensor_clear). A
 * name the engine does not keep, or an engine built without the setting, is
 * INFER_ERR_INVALID_ARGUMENT saying which. */
INFER_API infer_status infer_context_read_value(infer_context *c, const char *name,
                                                infer_tensor *out);

/* One value both runs kept, compared (test against reference). */
typedef struct infer_value_error {
  const char *name; /* ONNX value name (owned by the test engine, as the next three) */
  const char *node; /* the test engine's node that wrote it ("" for a graph input) */
  const char *op;   /* that node's op, after fusion (FusedConv, FusedChain, ...) */
  const char *impl; /* what ran it in the test engine: "cpu", "cudnn", a kernel name */
  int step;         /* its step in the test engine's run order (-1: a graph input) */
  int64_t count;    /* elements */
  double max_abs, mean_abs; /* |test - ref| over elements finite in both (INFINITY when
                             * one side alone is non-finite somewhere) */
  double scale;     /* max |ref| */
  double rel;       /* max_abs / scale */
  /* rel over the largest rel among the compared values the step was given (floored at
   * 1e-4): > 1 where this step adds error, about 1 where it only carries it */
  double growth;
  double ref_min, ref_max, test_min, test_max; /* ranges of the finite elements */
  int64_t test_nan, test_inf, ref_nonfinite;
  int64_t fp16_overflow; /* reference elements beyond float16's range (|x| > 65504) */
} infer_value_error;

/* Compares every value the last runs of `ref` and `test` both kept (contexts of two
 * engines of one model, both built with config keep_values=1, run on the same inputs),
 * matched by ONNX name and shape. *rows (malloc'ed, owned by the caller: free) holds
 * *n_rows entries ranked by growth, highest first (ties in run order): the first is
 * where the error first grows. Strings point into the test engine: keep it alive while
 * reading them. */
INFER_API infer_status infer_compare_values(infer_context *ref, infer_context *test,
                                            infer_value_error **rows, int *n_rows);

/* ---- registry --------------------------------------------------------------- */

/* Iterates the supported ops: fills name/domain/opset range of op `i`, returns
 * INFER_ERR_INVALID_ARGUMENT past the end. Strings are static. */
INFER_API infer_status infer_op_info(int i, const char **name, const char **domain,
                                     int *since_opset, int *until_opset);

#ifdef __cplusplus
}
#endif
#endif
