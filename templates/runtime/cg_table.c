/*
 * cg_table.c -- the shared runtime's entry points as a table, for programs that
 * drive models generically (a descriptor's runtime, when not NULL, replaces it).
 */
#include "cg_internal.h"

#ifndef CG_FUSED
const cg_runtime cg_runtime_shared = {
    cg_rhs, cg_mass_matrix, cg_forcing, cg_constraint_forces, cg_residuals, cg_project,
    cg_jacobian, cg_parameter_jacobian,
    cg_integrator_size, cg_integrator_init, cg_integrate_to, cg_integrator_stats,
    cg_integrator_set
};
#endif
