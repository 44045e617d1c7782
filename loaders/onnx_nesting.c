/* onnx_nesting.c: the wire-format depth walk of onnx_nesting.h.
 *
 * Protobuf wire format: a message is a sequence of (tag varint = field << 3 | wire
 * type, payload). Wire types: 0 varint, 1 fixed 8 bytes, 2 length-delimited (varint
 * length, then the bytes: strings, packed arrays, sub-messages), 5 fixed 4 bytes; 3
 * and 4 are the deprecated groups, which protobuf-c refuses, so the walk does too.
 *
 * Only the fields through which messages of loaders/onnx.proto can recurse are
 * descended into (the table below); every other field is skipped by its length, as
 * protobuf-c skips unknown fields without recursing. The project's onnx.proto reads
 * no TypeProto sequence/map/optional element types and no FunctionProto, so those
 * fields are unknown to the decoder and cannot make it recurse; adding such a
 * recursive field to onnx.proto means adding its row here. */
#include "onnx_nesting.h"

#include <stdbool.h>

#include "../core/status.h"

typedef enum msg_kind { MSG_MODEL, MSG_GRAPH, MSG_NODE, MSG_ATTRIBUTE, MSG_OTHER } msg_kind;

/* (parent message, field number) -> the message kind of that field's payload */
static const struct {
  msg_kind parent;
  uint32_t field;
  msg_kind child;
} recursive_fields[] = {
    {MSG_MODEL, 7, MSG_GRAPH},       /* ModelProto.graph */
    {MSG_GRAPH, 1, MSG_NODE},        /* GraphProto.node */
    {MSG_NODE, 5, MSG_ATTRIBUTE},    /* NodeProto.attribute */
    {MSG_ATTRIBUTE, 6, MSG_GRAPH},   /* AttributeProto.g */
    {MSG_ATTRIBUTE, 11, MSG_GRAPH},  /* AttributeProto.graphs */
};

static msg_kind child_kind(msg_kind parent, uint32_t field) {
  for (size_t i = 0; i < sizeof recursive_fields / sizeof recursive_fields[0]; i++)
    if (recursive_fields[i].parent == parent && recursive_fields[i].field == field)
      return recursive_fields[i].child;
  return MSG_OTHER;
}

/* Reads a varint at *pos (< end); false when truncated or longer than 10 bytes. */
static bool read_varint(const uint8_t *data, size_t end, size_t *pos, uint64_t *v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= end) return false;
    uint8_t b = data[(*pos)++];
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

/* Frames: the model, then three per subgraph level (graph, node, attribute), and one
 * more graph to notice a level too many. */
#define MAX_FRAMES (2 + 3 * (ONNX_MAX_SUBGRAPH_DEPTH + 1))

infer_status onnx_check_nesting(const uint8_t *data, size_t len, const char *path) {
  struct frame {
    msg_kind kind;
    size_t end;
  } stack[MAX_FRAMES];
  int top = 0;
  int graph_depth = -1; /* levels of GraphProto on the stack, minus one */
  stack[0].kind = MSG_MODEL;
  stack[0].end = len;
  size_t pos = 0;
  for (;;) {
    while (top > 0 && pos == stack[top].end) { /* sub-message finished */
      if (stack[top].kind == MSG_GRAPH) graph_depth--;
      top--;
    }
    if (top == 0 && pos == len) return INFER_OK;
    size_t end = stack[top].end;
    uint64_t tag, n;
    if (!read_varint(data, end, &pos, &tag)) goto malformed;
    uint32_t field = (uint32_t)(tag >> 3);
    if (field == 0 || (tag >> 3) > 0x1fffffff) goto malformed;
    switch (tag & 7) {
      case 0:
        if (!read_varint(data, end, &pos, &n)) goto malformed;
        break;
      case 1:
        if (end - pos < 8) goto malformed;
        pos += 8;
        break;
      case 5:
        if (end - pos < 4) goto malformed;
        pos += 4;
        break;
      case 2: {
        if (!read_varint(data, end, &pos, &n) || n > end - pos) goto malformed;
        msg_kind child = child_kind(stack[top].kind, field);
        if (child == MSG_OTHER) {
          pos += (size_t)n;
          break;
        }
        if (child == MSG_GRAPH && ++graph_depth > ONNX_MAX_SUBGRAPH_DEPTH)
          return infer_fail(INFER_ERR_INVALID_MODEL,
                            "'%s' nests subgraphs more than %d levels deep (node attributes "
                            "holding graphs that hold nodes ...), the limit of this loader "
                            "(ONNX_MAX_SUBGRAPH_DEPTH)",
                            path, ONNX_MAX_SUBGRAPH_DEPTH);
        /* cannot overflow: a graph beyond the limit was refused just above */
        top++;
        stack[top].kind = child;
        stack[top].end = pos + (size_t)n;
        break;
      }
      default: goto malformed; /* groups (3, 4) and the unused 6, 7 */
    }
  }
malformed:
  return infer_fail(INFER_ERR_INVALID_MODEL,
                    "'%s' is not a valid ONNX model (protobuf decoding failed: truncated "
                    "or not a ModelProto; malformed field near byte %zu)", path, pos);
}
