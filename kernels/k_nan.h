/* k_nan.h: the comparisons of the ONNX ops written so that NaN passes and infinities keep
 * their sign, as the ops' numpy references do (np.maximum / np.minimum / np.clip: a NaN
 * operand gives NaN; Relu = max(x, 0) keeps NaN). One form of each, shared by the CPU
 * reference (ops/) and the kernels (kernels/), so a fused epilogue gives the bits of the
 * ops it replaces, on either backend. Plain C macros (any float type, C or CUDA).
 *
 * Why not fmaxf / fminf: they return the other operand for a NaN one (fmaxf(NaN, 0) = 0),
 * and so do __hmax / __hmax2 on halves; `v > 0 ? v : 0` also turns NaN into 0. Each
 * form here is a compare and a select or two, branch-free on the GPU.
 * Arguments are evaluated more than once: pass plain values. */
#ifndef INFER_K_NAN_H
#define INFER_K_NAN_H

/* Relu: NaN and -0 pass (the Relu op's x < 0 ? 0 : x). */
#define K_NAN_RELU(v) ((v) < 0 ? 0 : (v))
/* Clip to [lo, hi] (lo, hi not NaN): NaN passes, as in numpy.clip and the Clip op. */
#define K_NAN_CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
/* Max / Min of two values: NaN when either is NaN (numpy.maximum / numpy.minimum). */
#define K_NAN_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define K_NAN_MIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
/* Whether v replaces `best` in a running maximum that tracks where it is (MaxPool's
 * indices): larger, or the first NaN met (which then stays, as numpy.argmax's). */
#define K_NAN_BEATS_MAX(v, best) ((v) > (best) || ((v) != (v) && (best) == (best)))

#endif
