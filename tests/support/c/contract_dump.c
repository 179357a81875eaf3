/* The contract as the C compiler reads cg_model.h: every list, its macros expanded and
   its texts joined, an item a line (tests/test_runtime_abi.py checks codegen.abi's own
   reading of the header against it). */
#include <stdio.h>
#include "cg_model.h"

#define STATUS(symbol, value, text) printf("status %s %d %s\n", #symbol, value, text);
#define FLAG(symbol, value, text) printf("flag %s %d\n", #symbol, value);
#define PROPERTY(symbol, value, text) printf("property %s %d\n", #symbol, value);
#define METHOD(symbol, value, name, properties, needs) \
    printf("method %s %d %s %d %d\n", #symbol, value, name, properties, needs);
#define FUNCTION(kind, parameters) printf("function %s %s\n", #kind, CG_STR(parameters));
#define CALLBACK(name, parameters) printf("callback %s %s\n", #name, CG_STR(parameters));
#define ENTRY(type, name, parameters) \
    printf("entry %s %s %s\n", #type, #name, CG_STR(parameters));

int main(void)
{
    CG_STATUS_LIST(STATUS)
    CG_FLAG_LIST(FLAG)
    CG_PROPERTY_LIST(PROPERTY)
    CG_METHOD_LIST(METHOD)
    CG_FUNCTION_LIST(FUNCTION)
    CG_CALLBACK_LIST(CALLBACK)
    CG_RUNTIME_LIST(ENTRY)
    printf("constant CG_ABI_VERSION %d\n", CG_ABI_VERSION);
    printf("constant CG_MANIFOLD_TOL %.17g\n", CG_MANIFOLD_TOL);
    printf("constant CG_MANIFOLD_FACTOR %.17g\n", CG_MANIFOLD_FACTOR);
    printf("constant CG_NEAR_SINGULAR_RATIO %.17g\n", CG_NEAR_SINGULAR_RATIO);
    printf("constant CG_MAX_STEPS %ld\n", CG_MAX_STEPS);
    printf("constant CG_EVENT_TOL %.17g\n", CG_EVENT_TOL);
    return 0;
}
