/*
 * cg_fused.c -- the runtime compiled into a model's own file (a fused build,
 * codegen.Options(fused=True)): the model's C defines its descriptor, then
 *
 *     #define CG_FUSED descriptor
 *     #include "cg_fused.c"
 *
 * Every runtime function becomes static and sees the model (its functions,
 * its sizes) as a compile-time constant: the model's equations inline into
 * the right-hand side and the integrators' loops have fixed bounds. The
 * descriptor's runtime points to this file's table. It costs a compile of the
 * whole runtime per model.
 */
#ifndef CG_FUSED
#error "define CG_FUSED as the model's descriptor before including cg_fused.c"
#endif
#include "cg_linalg.c"
#include "cg_dynamics.c"
#include "cg_jacobian.c"
#include "cg_step.c"
#include "cg_events.c"
#include "cg_explicit.c"
#include "cg_rosenbrock.c"
#include "cg_bdf.c"
#include "cg_ali3p.c"
#include "cg_integrate.c"

#define CG_RUNTIME_ENTRY(type, name, parameters) cg_##name,
static const cg_runtime cg_fused_runtime = {CG_RUNTIME_LIST(CG_RUNTIME_ENTRY)};
#undef CG_RUNTIME_ENTRY
