/*
 * cg_table.c -- the shared runtime's entry points as a table (cg_model.h's
 * CG_RUNTIME_LIST), for programs that drive models generically (a descriptor's
 * runtime, when not NULL, replaces it).
 */
#include "cg_internal.h"

#ifndef CG_FUSED
#define CG_RUNTIME_ENTRY(type, name, parameters) cg_##name,
const cg_runtime cg_runtime_shared = {CG_RUNTIME_LIST(CG_RUNTIME_ENTRY)};
#undef CG_RUNTIME_ENTRY
#endif
