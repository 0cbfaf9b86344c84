/* The kernel text compiled as plain C for the host (build.rs): the crate's tests run it
 * against libsecp256k1, and `gigagas gpu check --host` runs it without a GPU. */
#include "recover.cu"
