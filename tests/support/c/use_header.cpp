// C++ user of a generated model and the runtime: it must compile with g++ -Wall -Werror and
// link against the C objects. MODEL_HEADER and MODEL_DESCRIPTOR are set on the command line.
#include <cstdio>
#include <vector>
#include "cg_runtime.h"
#include MODEL_HEADER

int main()
{
    const cg_model *m = MODEL_DESCRIPTOR();
    std::vector<double> x(m->nx), p(m->np + 1, 1.0), r(m->nr + 1, 0.0), dx(m->nx);
    for (int i = 0; i < m->nx; i++) x[i] = 0.1 * (i + 1);
    int code = cg_rhs(m, 0.0, x.data(), p.data(), r.data(), dx.data());
    std::printf("%d %s %.17g\n", code, m->state_names[0], dx[0]);
    return 0;
}
