/*
 * fault.h - fault injection points (a build option, off in release builds).
 *
 * With ND_FAULT_INJECTION defined, ND_FAULT(point) asks fault.c whether this
 * call of `point` should fail; if so errno is set and the OS call is skipped.
 * Without it, ND_FAULT(point) is the constant 0 and costs nothing.
 */
#ifndef ND_FAULT_H
#define ND_FAULT_H

typedef enum {
    ND_FAULT_OPEN = 0,
    ND_FAULT_READ = 1,  /* pread/read */
    ND_FAULT_WRITE = 2, /* pwrite/write */
    ND_FAULT_FSYNC = 3,
    ND_FAULT_RENAME = 4,
    ND_FAULT_POINTS = 5
} nd_fault_point;

#ifdef ND_FAULT_INJECTION
/* 1: fail this call (errno set); 2: make this transfer short (half); 0: go on. */
int nd__fault_hit(nd_fault_point point);
#  define ND_FAULT_CHECK(p) nd__fault_hit(p)
#else
#  define ND_FAULT_CHECK(p) 0
#endif
/* for calls that can only fail, not fall short */
#define ND_FAULT(p) (ND_FAULT_CHECK(p) == 1)

#endif /* ND_FAULT_H */
