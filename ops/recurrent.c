/* recurrent.c: RNN, GRU and LSTM (opsets 7+; `layout` from 14), the recurrent layers of
 * speech and OCR models (a CRNN's bidirectional LSTM), CPU reference. One loop over the
 * steps of each direction and batch row, the gates in double:
 *   RNN   H = f(X W^T + H R^T + Wb + Rb)
 *   GRU   z, r = f(...); h = g(X Wh^T + (r . H) Rh^T + Rbh + Wbh), or with
 *         linear_before_reset g(X Wh^T + r . (H Rh^T + Rbh) + Wbh); H = (1 - z) h + z H
 *   LSTM  i, f = f(... + P . C); c = g(...); C = f C + i c; o = f(... + Po . C);
 *         H = o . h(C); input_forget couples f = 1 - i
 * gates in the ONNX order (GRU z r h, LSTM i o f c), `clip` bounding every gate's input,
 * sequence_lens ending a batch row early (its later outputs 0, its Y_h the last step's),
 * directions forward, reverse and bidirectional. Float16, float and double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "op.h"

enum { RNN_KIND, GRU_KIND, LSTM_KIND };
enum { MAX_ACTS = 6 }; /* 3 a direction (LSTM) x 2 directions */

typedef enum rec_act {
  ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU,
  ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
} rec_act;

typedef struct rec_params {
  int kind;
  int64_t hidden;
  int dirs, reverse_only; /* dirs 1 or 2; reverse_only: the one direction is reverse */
  int64_t layout;
  float clip; /* 0: none */
  int64_t input_forget, linear_before_reset;
  int n_acts;
  rec_act act[MAX_ACTS];
  double alpha[MAX_ACTS], beta[MAX_ACTS];
} rec_params;

static const char *const kind_name[] = {"RNN", "GRU", "LSTM"};
static const int gates_of[] = {1, 3, 4};      /* gate blocks in W, R */
static const int acts_of[] = {1, 2, 3};       /* activations a direction */

static const char *const rec_attrs[] = {"activation_alpha", "activation_beta", "activations",
                                        "clip", "direction", "hidden_size", "layout",
                                        "input_forget", "linear_before_reset", NULL};

/* The activation named s, with its defaults for alpha and beta (the ONNX ops' own). */
static bool act_from_name(const char *s, rec_act *a, double *al, double *be) {
  static const struct {
    const char *name;
    rec_act act;
    double alpha, beta;
  } t[] = {{"Sigmoid", ACT_SIGMOID, 0, 0},          {"Tanh", ACT_TANH, 0, 0},
           {"Relu", ACT_RELU, 0, 0},                {"Affine", ACT_AFFINE, 1, 0},
           {"LeakyRelu", ACT_LEAKY_RELU, 0.01, 0},  {"ThresholdedRelu", ACT_THRESHOLDED_RELU, 1, 0},
           {"ScaledTanh", ACT_SCALED_TANH, 1, 1},   {"HardSigmoid", ACT_HARD_SIGMOID, 0.2, 0.5},
           {"Elu", ACT_ELU, 1, 0},                  {"Softsign", ACT_SOFTSIGN, 0, 0},
           {"Softplus", ACT_SOFTPLUS, 0, 0}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strcasecmp(s, t[i].name) == 0) {
      *a = t[i].act;
      *al = t[i].alpha;
      *be = t[i].beta;
      return true;
    }
  return false;
}

static double act_apply(rec_act a, double al, double be, double v) {
  switch (a) {
    case ACT_SIGMOID: return 1 / (1 + exp(-v));
    case ACT_TANH: return tanh(v);
    case ACT_RELU: return v > 0 ? v : 0;
    case ACT_AFFINE: return al * v + be;
    case ACT_LEAKY_RELU: return v < 0 ? al * v : v;
    case ACT_THRESHOLDED_RELU: return v > al ? v : 0;
    case ACT_SCALED_TANH: return al * tanh(be * v);
    case ACT_HARD_SIGMOID: {
      double h = al * v + be;
      return h < 0 ? 0 : h > 1 ? 1 : h;
    }
    case ACT_ELU: return v < 0 ? al * (exp(v) - 1) : v;
    case ACT_SOFTSIGN: return v / (1 + fabs(v));
    case ACT_SOFTPLUS: return log1p(exp(v));
  }
  return v;
}

static infer_status rec_parse(const node *n, void **params) {
  rec_params v;
  memset(&v, 0, sizeof v);
  const char *kind = n->op_type;
  v.kind = strcmp(kind, "RNN") == 0 ? RNN_KIND : strcmp(kind, "GRU") == 0 ? GRU_KIND : LSTM_KIND;
  const char *dir;
  TRY(attr_get_int(n, "hidden_size", 0, &v.hidden));
  TRY(attr_get_string(n, "direction", "forward", &dir));
  TRY(attr_get_int(n, "layout", 0, &v.layout));
  TRY(attr_get_float(n, "clip", 0, &v.clip));
  TRY(attr_get_int(n, "input_forget", 0, &v.input_forget));
  TRY(attr_get_int(n, "linear_before_reset", 0, &v.linear_before_reset));
  if (v.hidden < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: hidden_size must be given and positive",
                      kind);
  if (strcmp(dir, "forward") == 0) {
    v.dirs = 1;
  } else if (strcmp(dir, "reverse") == 0) {
    v.dirs = 1;
    v.reverse_only = 1;
  } else if (strcmp(dir, "bidirectional") == 0) {
    v.dirs = 2;
  } else {
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: direction '%s' (forward, reverse or "
                      "bidirectional)", kind, dir);
  }
  if (v.layout != 0 && v.layout != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: layout %lld (0 or 1)", kind,
                      (long long)v.layout);
  if (v.clip < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: clip %g is negative", kind, v.clip);
  /* activations: the op's defaults for each direction unless listed */
  static const char *const defaults[3][3] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  int per = acts_of[v.kind];
  v.n_acts = per * v.dirs;
  const attr *acts = node_attr(n, "activations");
  if (acts && (acts->type != ATTR_STRINGS || acts->n != v.n_acts))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: activations must list %d names (%d a "
                      "direction)", kind, v.n_acts, per);
  const float *al, *be;
  int n_al, n_be;
  TRY(attr_get_floats(n, "activation_alpha", &al, &n_al));
  TRY(attr_get_floats(n, "activation_beta", &be, &n_be));
  for (int k = 0; k < v.n_acts; k++) {
    const char *name = acts ? acts->strings[k] : defaults[v.kind][k % per];
    if (!act_from_name(name, &v.act[k], &v.alpha[k], &v.beta[k]))
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s: activation '%s' is not supported", kind,
                        name);
    if (k < n_al) v.alpha[k] = al[k];
    if (k < n_be) v.beta[k] = be[k];
  }
  rec_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", kind);
  *p = v;
  *params = p;
  return INFER_OK;
}

/* Sizes from X and W, every input's shape checked. */
typedef struct rec_dims {
  int64_t seq, batch, input;
} rec_dims;

static bool shape_is(const tensor *t, int64_t a, int64_t b, int64_t c) {
  return t->rank == 3 && t->dims[0] == a && t->dims[1] == b && t->dims[2] == c;
}

static infer_status rec_dims_of(const rec_params *p, const tensor *const *in, rec_dims *d) {
  const char *kind = kind_name[p->kind];
  const tensor *x = in[0], *w = in[1], *r = in[2];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: X of dtype %s (float16, float, double)", kind,
                      infer_dtype_name(x->dtype));
  if (x->rank != 3) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: X must have rank 3", kind);
  d->seq = p->layout ? x->dims[1] : x->dims[0];
  d->batch = p->layout ? x->dims[0] : x->dims[1];
  d->input = x->dims[2];
  int64_t g = gates_of[p->kind] * p->hidden, h = p->hidden;
  if (!shape_is(w, p->dirs, g, d->input))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: W must be [%d, %lld, %lld]", kind, p->dirs,
                      (long long)g, (long long)d->input);
  if (!shape_is(r, p->dirs, g, h))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: R must be [%d, %lld, %lld]", kind, p->dirs,
                      (long long)g, (long long)h);
  const tensor *b = in[3], *sl = in[4], *h0 = in[5];
  if (b && !(b->rank == 2 && b->dims[0] == p->dirs && b->dims[1] == 2 * g))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: B must be [%d, %lld]", kind, p->dirs,
                      (long long)(2 * g));
  if (sl && !(sl->rank == 1 && sl->dims[0] == d->batch &&
              (sl->dtype == INFER_DTYPE_INT32 || sl->dtype == INFER_DTYPE_INT64)))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: sequence_lens must be int32 [%lld]", kind,
                      (long long)d->batch);
  int64_t s0 = p->layout ? d->batch : p->dirs, s1 = p->layout ? p->dirs : d->batch;
  for (int k = 5; k <= 6; k++) {
    const tensor *t = k == 5 ? h0 : (p->kind == LSTM_KIND ? in[6] : NULL);
    if (t && !shape_is(t, s0, s1, h))
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s must be [%lld, %lld, %lld]", kind,
                        k == 5 ? "initial_h" : "initial_c", (long long)s0, (long long)s1,
                        (long long)h);
  }
  if (p->kind == LSTM_KIND && in[7] &&
      !(in[7]->rank == 2 && in[7]->dims[0] == p->dirs && in[7]->dims[1] == 3 * h))
    return infer_fail(INFER_ERR_INVALID_MODEL, "LSTM: P must be [%d, %lld]", p->dirs,
                      (long long)(3 * h));
  for (int k = 1; k < (p->kind == LSTM_KIND ? 8 : 6); k++)
    if (k != 4 && in[k] && in[k]->dtype != x->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d is %s, X %s", kind, k,
                        infer_dtype_name(in[k]->dtype), infer_dtype_name(x->dtype));
  return INFER_OK;
}

/* The node's inputs and outputs padded with NULL to every slot the ops define (the
 * engine passes as many as the node names). */
typedef struct rec_io {
  const tensor *in[8];
  tensor *out[3];
} rec_io;

static rec_io rec_io_of(const node *n, const tensor *const *in, tensor *const *out) {
  rec_io io;
  memset(&io, 0, sizeof io);
  for (int k = 0; k < n->n_inputs && k < 8; k++) io.in[k] = in[k];
  for (int k = 0; k < n->n_outputs && k < 3; k++) io.out[k] = out[k];
  return io;
}

static infer_status rec_infer(const node *n, const void *params, const tensor *const *in_,
                              tensor *const *out_) {
  const rec_io io = rec_io_of(n, in_, out_);
  const tensor *const *in = io.in;
  tensor *const *out = io.out;
  const rec_params *p = params;
  rec_dims d;
  TRY(rec_dims_of(p, in, &d));
  for (int k = 0; k < (p->kind == LSTM_KIND ? 3 : 2); k++) {
    tensor *o = out[k];
    if (!o) continue;
    o->dtype = in[0]->dtype;
    if (k == 0) {
      o->rank = 4;
      int64_t y0[4] = {d.seq, p->dirs, d.batch, p->hidden}, y1[4] = {d.batch, d.seq, p->dirs,
                                                                   p->hidden};
      memcpy(o->dims, p->layout ? y1 : y0, sizeof y0);
    } else {
      o->rank = 3;
      o->dims[0] = p->layout ? d.batch : p->dirs;
      o->dims[1] = p->layout ? p->dirs : d.batch;
      o->dims[2] = p->hidden;
    }
    if (tensor_nbytes(o) < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output size overflows", kind_name[p->kind]);
  }
  return INFER_OK;
}

/* scratch: the gates' inputs, H, C and the next H, in double */
static int64_t rec_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  (void)n;
  (void)in;
  (void)out;
  const rec_params *p = params;
  return (int64_t)(gates_of[p->kind] + 4) * p->hidden * (int64_t)sizeof(double);
}

typedef struct rec_run {
  const rec_params *p;
  const tensor *const *in;
  tensor *const *out;
  rec_dims d;
} rec_run;

static double clipped(const rec_params *p, double v) {
  if (p->clip > 0) {
    if (v > p->clip) return p->clip;
    if (v < -p->clip) return -p->clip;
  }
  return v;
}

/* Hidden-state index (direction dd, batch row b, unit m) in Y_h / initial_h. */
static int64_t state_at(const rec_run *r, int dd, int64_t b, int64_t m) {
  const rec_params *p = r->p;
  return (p->layout ? b * p->dirs + dd : dd * r->d.batch + b) * p->hidden + m;
}

/* One direction of one batch row over its steps. */
static void run_row(const rec_run *r, int dd, int64_t b, double *ws) {
  const rec_params *p = r->p;
  const tensor *x = r->in[0], *w = r->in[1], *rr = r->in[2], *bias = r->in[3];
  const tensor *sl = r->in[4], *h0 = r->in[5];
  const tensor *c0 = p->kind == LSTM_KIND ? r->in[6] : NULL;
  const tensor *peep = p->kind == LSTM_KIND ? r->in[7] : NULL;
  const int64_t H = p->hidden, G = gates_of[p->kind] * H, I = r->d.input;
  const int64_t S = r->d.seq, B = r->d.batch;
  double *gate = ws, *h = gate + G, *c = h + H, *hn = c + H, *rh = hn + H;
  const int per = acts_of[p->kind], a0 = dd * per;
  const bool reverse = p->reverse_only || dd == 1;
  int64_t len = S;
  if (sl) {
    len = tensor_get_i64(sl, b);
    if (len < 0) len = 0;
    if (len > S) len = S;
  }
  for (int64_t m = 0; m < H; m++) {
    h[m] = h0 ? tensor_get_f64(h0, state_at(r, dd, b, m)) : 0;
    c[m] = c0 ? tensor_get_f64(c0, state_at(r, dd, b, m)) : 0;
  }
  const int64_t wbase = (int64_t)dd * G * I, rbase = (int64_t)dd * G * H;
  for (int64_t k = 0; k < len; k++) {
    const int64_t t = reverse ? len - 1 - k : k;
    const int64_t xo = (p->layout ? b * S + t : t * B + b) * I;
    /* gate j: X W_j^T + biases (+ H R_j^T except GRU's h gate, below) */
    for (int64_t j = 0; j < G; j++) {
      double acc = bias ? tensor_get_f64(bias, (int64_t)dd * 2 * G + j) +
                              (p->kind == GRU_KIND && j >= 2 * H
                                   ? 0 /* Rbh joins later */
                                   : tensor_get_f64(bias, (int64_t)dd * 2 * G + G + j))
                        : 0;
      for (int64_t i = 0; i < I; i++)
        acc += tensor_get_f64(x, xo + i) * tensor_get_f64(w, wbase + j * I + i);
      if (!(p->kind == GRU_KIND && j >= 2 * H))
        for (int64_t m = 0; m < H; m++) acc += h[m] * tensor_get_f64(rr, rbase + j * H + m);
      gate[j] = acc;
    }
    if (p->kind == RNN_KIND) {
      for (int64_t m = 0; m < H; m++)
        hn[m] = act_apply(p->act[a0], p->alpha[a0], p->beta[a0], clipped(p, gate[m]));
    } else if (p->kind == GRU_KIND) {
      const rec_act f = p->act[a0], g = p->act[a0 + 1];
      double *z = gate, *rg = gate + H, *hg = gate + 2 * H;
      for (int64_t m = 0; m < H; m++) {
        z[m] = act_apply(f, p->alpha[a0], p->beta[a0], clipped(p, z[m]));
        rg[m] = act_apply(f, p->alpha[a0], p->beta[a0], clipped(p, rg[m]));
      }
      /* the h gate's recurrent part: (r . H) Rh^T + Rbh, or r . (H Rh^T + Rbh) */
      for (int64_t m = 0; m < H; m++) {
        double acc = bias ? tensor_get_f64(bias, (int64_t)dd * 2 * G + G + 2 * H + m) : 0;
        if (p->linear_before_reset) {
          for (int64_t q = 0; q < H; q++)
            acc += h[q] * tensor_get_f64(rr, rbase + (2 * H + m) * H + q);
          rh[m] = rg[m] * acc;
        } else {
          for (int64_t q = 0; q < H; q++)
            acc += rg[q] * h[q] * tensor_get_f64(rr, rbase + (2 * H + m) * H + q);
          rh[m] = acc;
        }
      }
      for (int64_t m = 0; m < H; m++) {
        double hh = act_apply(g, p->alpha[a0 + 1], p->beta[a0 + 1], clipped(p, hg[m] + rh[m]));
        hn[m] = (1 - z[m]) * hh + z[m] * h[m];
      }
    } else {
      const rec_act f = p->act[a0], g = p->act[a0 + 1], hact = p->act[a0 + 2];
      const double *gi = gate, *go = gate + H, *gf = gate + 2 * H, *gc = gate + 3 * H;
      const int64_t pb = (int64_t)dd * 3 * H;
      for (int64_t m = 0; m < H; m++) {
        double pi = peep ? tensor_get_f64(peep, pb + m) : 0;
        double po = peep ? tensor_get_f64(peep, pb + H + m) : 0;
        double pf = peep ? tensor_get_f64(peep, pb + 2 * H + m) : 0;
        double i_ = act_apply(f, p->alpha[a0], p->beta[a0], clipped(p, gi[m] + pi * c[m]));
        double f_ = p->input_forget ? 1 - i_
                                    : act_apply(f, p->alpha[a0], p->beta[a0],
                                                clipped(p, gf[m] + pf * c[m]));
        double c_ = act_apply(g, p->alpha[a0 + 1], p->beta[a0 + 1], clipped(p, gc[m]));
        double cn = f_ * c[m] + i_ * c_;
        double o_ = act_apply(f, p->alpha[a0], p->beta[a0], clipped(p, go[m] + po * cn));
        c[m] = cn;
        hn[m] = o_ * act_apply(hact, p->alpha[a0 + 2], p->beta[a0 + 2], cn);
      }
    }
    memcpy(h, hn, (size_t)H * sizeof *h);
    if (r->out[0]) {
      const int64_t yo = (p->layout ? (b * S + t) * p->dirs + dd : (t * p->dirs + dd) * B + b) * H;
      for (int64_t m = 0; m < H; m++) tensor_set_f64(r->out[0], yo + m, h[m]);
    }
  }
  for (int64_t m = 0; m < H; m++) {
    if (r->out[1]) tensor_set_f64(r->out[1], state_at(r, dd, b, m), h[m]);
    if (p->kind == LSTM_KIND && r->out[2]) tensor_set_f64(r->out[2], state_at(r, dd, b, m), c[m]);
  }
}

static infer_status rec_exec(const node *n, const void *params, const tensor *const *in_,
                             tensor *const *out_, void *ws) {
  const rec_io io = rec_io_of(n, in_, out_);
  const tensor *const *in = io.in;
  tensor *const *out = io.out;
  rec_run r = {.p = params, .in = in, .out = out};
  TRY(rec_dims_of(r.p, in, &r.d));
  if (out[0]) /* steps past a row's sequence length stay 0 */
    memset(out[0]->data, 0, (size_t)tensor_nbytes(out[0]));
  for (int dd = 0; dd < r.p->dirs; dd++)
    for (int64_t b = 0; b < r.d.batch; b++) run_row(&r, dd, b, ws);
  return INFER_OK;
}

/* RNN and GRU: X, W, R, B, sequence_lens, initial_h; LSTM adds initial_c and P */
#define REC_OP(NAME, MAX_IN, MAX_OUT)                                                       \
  {.name = NAME, .domain = "", .since = 7, .until = OP_OPSET_MAX, .min_inputs = 3,           \
   .max_inputs = MAX_IN, .min_outputs = 0, .max_outputs = MAX_OUT, .attrs = rec_attrs,       \
   .parse = rec_parse, .infer = rec_infer, .run = rec_exec, .workspace = rec_workspace}
static const op_desc rnn_op = REC_OP("RNN", 6, 2);
static const op_desc gru_op = REC_OP("GRU", 6, 2);
static const op_desc lstm_op = REC_OP("LSTM", 8, 3);
#undef REC_OP

const op_desc *const ops_recurrent[] = {&rnn_op, &gru_op, &lstm_op, NULL};
