#include <stdint.h>
#include <caml/mlvalues.h>
#include <caml/fail.h>
#include <boxroot/boxroot.h>

/* A C table whose entries are tied to OCaml values without keeping them
   alive: an entry goes when its value dies. */
#define SIZE 1000
struct entry { boxroot_weak key; long data; };
static struct entry table[SIZE];
static long entries;

value table_add(value index, value key)
{
  long i = Long_val(index);
  /* Reports its emptying with the word i, the entry's index. */
  table[i].key = boxroot_weak_create_notifying(key, (uintptr_t)i);
  if (table[i].key == NULL) caml_failwith(boxroot_error_string());
  table[i].data = i;
  entries++;
  return Val_unit;
}

/* Removes the entries whose value the GC found dead, at a cost in
   proportion to them, not to the table: no polling of every entry. */
value table_sweep(value unit)
{
  boxroot_weak w;
  uintptr_t i;
  long removed = 0;
  while (boxroot_weak_next_emptied(&w, &i)) {
    boxroot_weak_delete(w);             /* table[i].key: still ours */
    table[i].key = NULL;
    entries--;
    removed++;
  }
  return Val_long(removed);
}

value table_entries(value unit)
{
  return Val_long(entries);
}
