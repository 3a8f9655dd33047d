/* GC scanning through OCaml's root-scanning hook (scan.c). */
#ifndef BOXROOT_SCAN_H
#define BOXROOT_SCAN_H

/* Install and remove boxroot's runtime hooks (domain lock held). */
void scan_install_hooks(void);
void scan_remove_hooks(void);

#endif
