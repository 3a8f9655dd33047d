/* A user of the inline fast paths, compiled by check_layout.sh with the
   library's layout and with another pool size. */
#include "boxroot.h"

boxroot layout_user_roundtrip(value v)
{
  boxroot r = boxroot_create(v);
  if (r != NULL && boxroot_modify(&r, v)) boxroot_delete(r);
  return r;
}
