// SPDX-License-Identifier: MIT
/* xen.c - the word ThreadSanitizer builds use as a barrier (see common/xen.h) */
#include "common/xen.h"

#if defined(__SANITIZE_THREAD__)
_Atomic unsigned int pvnet_tsan_fence;
#endif
