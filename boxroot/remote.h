/* Deletion by a thread that does not own the root's pool. */
#ifndef BOXROOT_REMOTE_H
#define BOXROOT_REMOTE_H

#include "pool.h"

/* Frees the slots of `p` whose deletion was delayed. Owner only (domain
   lock held, or its scan hook). Returns how many; the caller then fixes
   the pool's ring position if the count matters to it. */
int remote_collect(pool *p);

/* Deletions so far by threads holding no domain lock. */
long remote_purely_remote_deletes(void);

#endif
