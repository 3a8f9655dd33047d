/* A naive doubly-linked list of roots (the paper's §3.1.2 control): one
   malloc'd node per root, on a young list if its value was young when
   stored and on an old list otherwise, scanned through the GC's root
   scanning hook (dll.c). Single-domain and not thread-safe, like the
   paper's. */
#include "impl_api.h"
#include <caml/address_class.h>

#define IMPL_NAME "dll"
#define IMPL_REF_IS_BLOCK 0

struct dll_node {
  value v;                       /* first: the node is the cell */
  struct dll_node *prev, *next;
  int young;                     /* on the young list */
};
typedef struct dll_node *ref_t;

extern struct dll_node dll_young, dll_old; /* list heads (sentinels) */
void dll_setup(void);
extern int dll_ready;

static inline int dll_is_young(value v) { return Is_block(v) && Is_young(v); }

static inline void dll_link(struct dll_node *n, struct dll_node *head)
{
  n->prev = head;
  n->next = head->next;
  head->next->prev = n;
  head->next = n;
}
static inline void dll_unlink(struct dll_node *n)
{
  n->prev->next = n->next;
  n->next->prev = n->prev;
}

static inline ref_t ref_create(value v)
{
  if (!dll_ready) dll_setup();
  struct dll_node *n = malloc(sizeof *n);
  if (n == NULL) impl_die("malloc");
  n->v = v;
  n->young = dll_is_young(v);
  dll_link(n, n->young ? &dll_young : &dll_old);
  return n;
}
static inline value ref_get(ref_t r) { return r->v; }
static inline void ref_modify(ref_t *r, value v)
{
  struct dll_node *n = *r;
  if (!n->young && dll_is_young(v)) {
    dll_unlink(n);
    n->young = 1;
    dll_link(n, &dll_young);
  }
  n->v = v;
}
static inline void ref_delete(ref_t r) { dll_unlink(r); free(r); }
static inline value ref_to_ocaml(ref_t r) { return impl_disguise(r); }
static inline ref_t ref_of_ocaml(value v) { return impl_undisguise(v); }
static inline long impl_pools_used(void) { return -1; }
static inline void impl_stats_fields(char *buf, size_t size) { if (size) buf[0] = 0; }
static inline void impl_setup(void) {}
