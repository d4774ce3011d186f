/* Links lenet_cref_0_weights.bin (235680 bytes, little-endian, bit-exact) into the library as the
 * read-only symbol lenet_cref_0_weights, so large weights never pass through the C compiler as text.
 * Place the section .rodata.aotc_weights with your linker script.
 * sha256 of the blob: bcee0bd14b5a661f1feae88b55d0b66700f236599989107fdd96045d30b50db2
 * (a compiler cache hashes this file, not the blob: the digest keeps it from taking another
 * model's object for it) */
#include <stdint.h>

extern const uint8_t lenet_cref_0_weights[];  /* what the generated code reads; defined below */

__asm__(".pushsection .rodata.aotc_weights,\"a\"\n"
        ".balign 64\n"
        ".globl lenet_cref_0_weights\n"
        ".hidden lenet_cref_0_weights\n"
        ".type lenet_cref_0_weights, %object\n"
        "lenet_cref_0_weights:\n"
        ".incbin \"lenet_cref_0_weights.bin\"\n"
        ".size lenet_cref_0_weights, . - lenet_cref_0_weights\n"
        ".popsection\n");
