/* fuzz_tensor_pb.c: libFuzzer target for the TensorProto (.pb) reader: protobuf-c's
 * decoding and loaders/tensor_proto.c (dims, dtype, raw or typed data; external data
 * is refused without a model folder), the path infer_tensor_read_file takes for .pb
 * files, in memory. A decoded tensor's bytes are all read back. */
#include <stdint.h>
#include <stdlib.h>

#include "loaders/tensor_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
  if (!tp) return 0;
  tensor t;
  if (tensor_from_proto(tp, NULL, "fuzz.pb", NULL, &t) == INFER_OK) {
    int64_t n = tensor_nbytes(&t);
    volatile uint8_t sum = 0;
    for (int64_t b = 0; b < n; b++) sum ^= ((const uint8_t *)t.data)[b];
    (void)sum;
  }
  infer_tensor_clear(&t);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return 0;
}
