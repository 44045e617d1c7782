/* cuda_backend.c: the CUDA backend's table (engine/backend.h): the build half is
 * cuda_engine.c, the run half cuda_context.c, the diagnosis cuda_diagnose.c. */
#include "cuda_backend.h"

const backend cuda_backend = {
    .name = "cuda",
    .device = INFER_DEVICE_CUDA,
    .computes_run_batch = false,
    .device_count = cuda_visible_devices,
    .diagnose = cuda_diagnose,
    .build = cuda_engine_build,
    .release = cuda_engine_release,
    .memory = cuda_engine_memory,
    .context_create = cuda_context_create,
    .context_release = cuda_context_release,
    .set_input = cuda_context_set_input,
    .input_buffer = cuda_context_input_buffer,
    .output_buffer = cuda_context_output_buffer,
    .bind_input = cuda_context_bind_input,
    .bind_output = cuda_context_bind_output,
    .input_bound = cuda_context_input_bound,
    .output_bound = cuda_context_output_bound,
    .enqueue = cuda_context_enqueue,
    .wait = cuda_context_wait,
    .health = cuda_context_health,
    .output = cuda_context_output,
    .profile = cuda_context_profile,
    .timing = cuda_context_timing,
    .read_value = cuda_context_read_value,
    .step_impl = cuda_step_impl,
};
