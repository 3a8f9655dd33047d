/* GC scanning through OCaml's root-scanning hook (scan.c). */
#ifndef BOXROOT_SCAN_H
#define BOXROOT_SCAN_H

/* Install and remove boxroot's runtime hooks (domain lock held). */
void scan_install_hooks(void);
void scan_remove_hooks(void);

/* Scan durations are kept in clock ticks, converted when read: on x86-64
   the time-stamp counter, which costs about 7 ns to read here against 22
   ns for clock_gettime (two reads per scan with work; globroots makes
   about 190,000 such scans). Elsewhere ticks are nanoseconds. */
long scan_ticks_to_ns(long ticks);

#endif
