/* cli_stats.h: the clock and the order statistics the benchmarks print (cli_bench.c,
 * cli_streams.c). */
#ifndef INFER_CLI_STATS_H
#define INFER_CLI_STATS_H

/* Milliseconds of CLOCK_MONOTONIC. */
double cli_now_ms(void);
/* qsort comparison of doubles, ascending. */
int cli_cmp_double(const void *a, const void *b);
/* The p-th percentile, p in [0, 100], of sorted v[0..n) (nearest rank). */
double cli_percentile(const double *v, long n, double p);

#endif
