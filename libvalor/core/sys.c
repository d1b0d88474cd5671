// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-thread lock count sys.h declares, and what runs once it is 0. */
#include "sys.h"

__thread unsigned eng_locks_held __attribute__((tls_model("initial-exec")));
__thread bool eng_after_locks __attribute__((tls_model("initial-exec")));
void (*eng_after_locks_hook)(void);
