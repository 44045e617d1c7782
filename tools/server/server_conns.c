/* server_conns.c: the server's guard against clients that hold connections without
 * finishing requests (slowloris): a registry of the open connections, each with the
 * phase it is in and since when, a sweep thread that closes the ones past their
 * deadline, and eviction of a waiting connection when the limit is reached: the oldest
 * of those from the address that holds the most connections.
 *
 * libmicrohttpd (0.9.75) has only an idle timeout, which every byte resets, and at its
 * connection limit it stops accepting: a client sending one byte every few seconds on
 * each of `limit` connections keeps everyone else out. This file knows nothing of HTTP:
 * it works on socket descriptors, and "closing" one is shutdown(2), which makes the
 * owning libmicrohttpd thread see the end of the stream and close the connection
 * itself, in its own thread. The descriptor is only shut while its entry is in the
 * registry, under the lock; the HTTP layer removes the entry (srv_conns_closed, from
 * libmicrohttpd's connection-closed notification, which comes before the close(2))
 * under the same lock, so a descriptor number reused by a later connection is never
 * shut by mistake. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "server.h"

/* Open connections per client address (a small chained hash table). */
typedef struct addr_count {
  struct addr_count *next;
  unsigned char key[17]; /* family byte, then 4 or 16 address bytes */
  unsigned bucket;
  int count;
} addr_count;

#define ADDR_BUCKETS 1024

struct srv_conn {
  struct srv_conn *prev, *next;
  addr_count *from; /* NULL for an address of another family */
  int fd;
  srv_conn_phase phase;
  int64_t since_ns; /* when the phase began (CLOCK_MONOTONIC) */
  bool shut;        /* shutdown(2) done; libmicrohttpd closes it soon */
};

struct srv_conns {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  srv_conn *head, *tail; /* in order of opening */
  int count;             /* open connections (shut ones included until closed) */
  int limit;             /* at this many, a new one evicts the oldest waiting one */
  int64_t deadline_ns;   /* of a RECEIVING or SENDING phase */
  bool stop;
  bool verbose;
  pthread_t sweeper;
  atomic_llong closed_deadline, evicted;
  addr_count *by_addr[ADDR_BUCKETS];
};

/* The sweep's period: deadlines are kept to within this. */
#define SWEEP_NS (200 * 1000000LL)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const char *phase_name(srv_conn_phase p) {
  switch (p) {
    case SRV_CONN_RECEIVING: return "receiving a request";
    case SRV_CONN_WORKING: return "in the worker pool";
    case SRV_CONN_SENDING: return "sending the answer";
  }
  return "?";
}

/* The count of addr's family and bytes, created at 0 when new; NULL for other families
 * or when out of memory (such a connection just never counts as crowded). Under the
 * lock. */
static addr_count *addr_lookup(srv_conns *cs, const struct sockaddr *addr) {
  unsigned char key[17] = {0};
  size_t n;
  if (addr && addr->sa_family == AF_INET) {
    key[0] = 4;
    memcpy(key + 1, &((const struct sockaddr_in *)addr)->sin_addr, 4);
    n = 5;
  } else if (addr && addr->sa_family == AF_INET6) {
    key[0] = 6;
    memcpy(key + 1, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
    n = 17;
  } else {
    return NULL;
  }
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ key[i]) * 16777619u;
  addr_count **b = &cs->by_addr[h % ADDR_BUCKETS];
  for (addr_count *a = *b; a; a = a->next)
    if (memcmp(a->key, key, sizeof key) == 0) return a;
  addr_count *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  memcpy(a->key, key, sizeof key);
  a->bucket = h % ADDR_BUCKETS;
  a->next = *b;
  *b = a;
  return a;
}

static void addr_drop(srv_conns *cs, addr_count *a) {
  if (!a || --a->count > 0) return;
  for (addr_count **p = &cs->by_addr[a->bucket]; *p; p = &(*p)->next)
    if (*p == a) {
      *p = a->next;
      free(a);
      return;
    }
}

/* Under the lock. */
static void shut(srv_conn *c) {
  c->shut = true;
  shutdown(c->fd, SHUT_RDWR);
}

static void *sweep_main(void *arg) {
  srv_conns *cs = arg;
  pthread_mutex_lock(&cs->lock);
  while (!cs->stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += SWEEP_NS;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&cs->wake, &cs->lock, &until);
    if (cs->stop) break;
    int64_t now = now_ns();
    for (srv_conn *c = cs->head; c; c = c->next) {
      /* a run's time is the server's, not the client's: WORKING has no deadline */
      if (c->shut || c->phase == SRV_CONN_WORKING || now - c->since_ns <= cs->deadline_ns)
        continue;
      if (cs->verbose)
        fprintf(stderr, "infer-server: closing connection (fd %d): %.1f s %s, past the deadline\n",
                c->fd, (double)(now - c->since_ns) / 1e9, phase_name(c->phase));
      shut(c);
      atomic_fetch_add(&cs->closed_deadline, 1);
    }
  }
  pthread_mutex_unlock(&cs->lock);
  return NULL;
}

srv_conns *srv_conns_create(int limit, int request_timeout_s, bool verbose) {
  srv_conns *cs = calloc(1, sizeof *cs);
  if (!cs) return NULL;
  pthread_mutex_init(&cs->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&cs->wake, &ca);
  pthread_condattr_destroy(&ca);
  cs->limit = limit;
  cs->deadline_ns = (int64_t)request_timeout_s * 1000000000LL;
  cs->verbose = verbose;
  atomic_init(&cs->closed_deadline, 0);
  atomic_init(&cs->evicted, 0);
  if (pthread_create(&cs->sweeper, NULL, sweep_main, cs) != 0) {
    pthread_cond_destroy(&cs->wake);
    pthread_mutex_destroy(&cs->lock);
    free(cs);
    return NULL;
  }
  return cs;
}

srv_conn *srv_conns_opened(srv_conns *cs, int fd, const struct sockaddr *addr) {
  srv_conn *c = calloc(1, sizeof *c);
  if (!c) return NULL; /* untracked: the idle timeout still applies */
  c->fd = fd;
  c->phase = SRV_CONN_RECEIVING;
  c->since_ns = now_ns();
  pthread_mutex_lock(&cs->lock);
  if ((c->from = addr_lookup(cs, addr))) c->from->count++;
  c->prev = cs->tail;
  if (cs->tail) cs->tail->next = c;
  else cs->head = c;
  cs->tail = c;
  cs->count++;
  if (cs->count >= cs->limit) {
    /* Full: libmicrohttpd accepts no more until one closes. Make room now by closing a
     * connection that waits for its request to arrive (a trickling client, or an idle
     * keep-alive one), so that a new client is served at once: one from the address
     * holding the most connections (a flood, not the lone client whose upload is
     * under way; a flood that reconnects as fast as it is closed has only young
     * connections, so age alone would pick the legitimate ones), the oldest of those.
     * A connection whose request runs or whose answer is going out is never chosen. */
    srv_conn *victim = NULL;
    int victim_crowd = 0;
    for (srv_conn *o = cs->head; o; o = o->next) {
      if (o == c || o->shut || o->phase != SRV_CONN_RECEIVING) continue;
      int crowd = o->from ? o->from->count : 1;
      if (!victim || crowd > victim_crowd ||
          (crowd == victim_crowd && o->since_ns < victim->since_ns)) {
        victim = o;
        victim_crowd = crowd;
      }
    }
    if (victim) {
      if (cs->verbose)
        fprintf(stderr,
                "infer-server: %d connections (the limit): closing one waiting for its "
                "request (fd %d, %.1f s, its address has %d)\n",
                cs->count, victim->fd, (double)(c->since_ns - victim->since_ns) / 1e9,
                victim_crowd);
      shut(victim);
      atomic_fetch_add(&cs->evicted, 1);
    }
  }
  pthread_mutex_unlock(&cs->lock);
  return c;
}

void srv_conns_phase(srv_conns *cs, srv_conn *c, srv_conn_phase phase) {
  if (!c) return;
  pthread_mutex_lock(&cs->lock);
  c->phase = phase;
  c->since_ns = now_ns();
  pthread_mutex_unlock(&cs->lock);
}

void srv_conns_closed(srv_conns *cs, srv_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&cs->lock);
  if (c->prev) c->prev->next = c->next;
  else cs->head = c->next;
  if (c->next) c->next->prev = c->prev;
  else cs->tail = c->prev;
  cs->count--;
  addr_drop(cs, c->from);
  pthread_mutex_unlock(&cs->lock);
  free(c);
}

void srv_conns_counts(srv_conns *cs, long long *closed_deadline, long long *evicted) {
  *closed_deadline = atomic_load(&cs->closed_deadline);
  *evicted = atomic_load(&cs->evicted);
}

void srv_conns_release(srv_conns *cs) {
  if (!cs) return;
  pthread_mutex_lock(&cs->lock);
  cs->stop = true;
  pthread_cond_signal(&cs->wake);
  pthread_mutex_unlock(&cs->lock);
  pthread_join(cs->sweeper, NULL);
  /* entries left (none once the daemon is stopped) belong to no one now */
  for (srv_conn *c = cs->head, *n; c; c = n) {
    n = c->next;
    free(c);
  }
  for (size_t i = 0; i < ADDR_BUCKETS; i++)
    for (addr_count *a = cs->by_addr[i], *n; a; a = n) {
      n = a->next;
      free(a);
    }
  pthread_cond_destroy(&cs->wake);
  pthread_mutex_destroy(&cs->lock);
  free(cs);
}
