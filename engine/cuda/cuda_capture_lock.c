/* cuda_capture_lock.c: keeps device-synchronizing work (builds, context creation
 * and release) out of the way of CUDA graph captures in other threads. */
#include <pthread.h>

#include "cuda_internal.h"

static pthread_rwlock_t capture_lock = PTHREAD_RWLOCK_INITIALIZER;

void cuda_device_work_begin(void) { pthread_rwlock_rdlock(&capture_lock); }
void cuda_device_work_end(void) { pthread_rwlock_unlock(&capture_lock); }
void cuda_capture_begin(void) { pthread_rwlock_wrlock(&capture_lock); }
void cuda_capture_end(void) { pthread_rwlock_unlock(&capture_lock); }
