/* Scanning for the doubly-linked-list roots (impl_dll.h). Minor
   collections scan the young list and then append it to the old list
   (its values are no longer young); major collections scan both. */
#define CAML_INTERNALS
#include <caml/version.h>
#include <caml/roots.h>
#include "impl.h"

struct dll_node dll_young = { Val_unit, &dll_young, &dll_young, 1 };
struct dll_node dll_old = { Val_unit, &dll_old, &dll_old, 0 };
int dll_ready;

static void promote_young_list(void)
{
  if (dll_young.next == &dll_young) return;
  for (struct dll_node *n = dll_young.next; n != &dll_young; n = n->next) n->young = 0;
  /* Splice [young.next .. young.prev] after the old head. */
  struct dll_node *first = dll_young.next, *last = dll_young.prev;
  last->next = dll_old.next;
  dll_old.next->prev = last;
  dll_old.next = first;
  first->prev = &dll_old;
  dll_young.next = dll_young.prev = &dll_young;
}

#if OCAML_VERSION_MAJOR >= 5
#define APPLY(v, p) action(data, (v), (volatile value *)(p))
static scan_roots_hook previous_hook;
static void scan_hook(scanning_action action, scanning_action_flags flags,
                      void *data, caml_domain_state *dom)
{
  if (previous_hook != NULL) previous_hook(action, flags, data, dom);
  if (dom->id != 0) return;
  int minor = (flags & SCANNING_ONLY_YOUNG_VALUES) != 0;
#else
#include <caml/minor_gc.h>
#define APPLY(v, p) action((v), (p))
static void (*previous_hook)(scanning_action);
static void scan_hook(scanning_action action)
{
  if (previous_hook != NULL) previous_hook(action);
  int minor = action == caml_oldify_one;
#endif
  for (struct dll_node *n = dll_young.next; n != &dll_young; n = n->next)
    if (Is_block(n->v) && (!minor || Is_young(n->v))) APPLY(n->v, &n->v);
  if (minor) {
    promote_young_list();
  } else {
    for (struct dll_node *n = dll_old.next; n != &dll_old; n = n->next)
      if (Is_block(n->v)) APPLY(n->v, &n->v);
  }
}

void dll_setup(void)
{
  dll_ready = 1;
#if OCAML_VERSION_MAJOR >= 5
  previous_hook = atomic_exchange(&caml_scan_roots_hook, scan_hook);
#else
  previous_hook = caml_scan_roots_hook;
  caml_scan_roots_hook = scan_hook;
#endif
}
