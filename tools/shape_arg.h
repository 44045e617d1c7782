/* shape_arg.h: parsing "NAME=AxBxC" (or NAME=scalar) command-line shapes, shared by
 * the infer CLI and the example server. */
#ifndef INFER_SHAPE_ARG_H
#define INFER_SHAPE_ARG_H

#include <stdbool.h>
#include <stdint.h>

/* Splits arg in place at its last '=': *name points into arg, dims get the
 * non-negative sizes separated by 'x' or ','. False when malformed or when there
 * are more than max_rank dims. */
bool shape_arg_parse(char *arg, const char **name, int *rank, int64_t *dims, int max_rank);

#endif
