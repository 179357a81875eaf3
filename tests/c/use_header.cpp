// C++ user of a generated header: it must compile with g++ -Wall -Werror and link
// against the C object. MODEL_HEADER, MODEL_PREFIX(x) are set on the command line.
#include <cstdio>
#include MODEL_HEADER

int main()
{
    double x[MODEL_NX] = {0}, p[MODEL_NP + 1] = {0}, dx[MODEL_NX];
    for (int i = 0; i < MODEL_NX; i++) x[i] = 0.1 * (i + 1);
    for (int i = 0; i < MODEL_NP; i++) p[i] = 1.0;
    int code = MODEL_RHS(0.0, x, p, nullptr, dx);
    std::printf("%d %s %.17g\n", code, MODEL_STATE_NAMES[0], dx[0]);
    return 0;
}
