/*
 * gigagas-gpu: batched secp256k1 public-key recovery (Ethereum sender recovery).
 *
 * One thread recovers one signature: (z = signing hash, r, s, y-parity) -> the 20-byte address
 * keccak256(x || y)[12..32] of the public key Q = r^-1 (s R - z G), or status 0 where no key
 * exists (r or s zero or >= n, r not the x of a curve point, Q at infinity).
 *
 * The SAME text compiles two ways:
 *   - with NVRTC (the crate embeds it with include_str! and compiles it at run time), where
 *     __CUDACC_RTC__ is defined and gg_recover / gg_fill_table are the kernels;
 *   - as plain C on the host (build.rs, through host.c), where the launch wrappers at the end
 *     loop over the thread index instead. The crate's tests compare that build with
 *     libsecp256k1, so the arithmetic that runs on the GPU is the arithmetic that was tested.
 *
 * Representation: field elements mod p and scalars mod n are 8 little-endian 32-bit limbs,
 * always fully reduced (< p, < n). Points are Jacobian (X, Y, Z) with an infinity flag;
 * the precomputed table of G holds affine points.
 *
 * Work per signature: scalar inverse r^-1 mod n (Fermat, 4-bit window), square root for the
 * decompression of R (addition chain), u1 G from a table of 32 windows x 255 multiples of
 * 2^(8w) G (32 mixed additions, no doublings), u2 R by a 4-bit fixed window (256 doublings,
 * up to 64 additions), one field inversion per thread for the affine result (no batched
 * inversion across threads), keccak-f[1600] on the 64-byte public key.
 */

#ifdef __CUDACC_RTC__
typedef unsigned int u32;
typedef unsigned long long u64;
#define GG_FN static __device__ __forceinline__
/* Point operations, inversions and multiplications: called, not inlined (their bodies inline
 * the field arithmetic; inlining them too would multiply the code size and NVRTC's time). */
#define GG_BIG static __device__ __noinline__
#define GG_CONSTANT static __constant__ const
#define GG_UNROLL _Pragma("unroll")
#else
#include <stdint.h>
typedef uint32_t u32;
typedef uint64_t u64;
#define GG_FN static inline
#define GG_BIG static
#define GG_CONSTANT static const
#define GG_UNROLL
#endif

/* Words per signature in the input buffer: z[8], r[8], s[8], parity. */
#define GG_IN_WORDS 25
/* Words per result: status (1 = recovered), then the address's 20 bytes in 5 words. */
#define GG_OUT_WORDS 6
/* The G table: 32 windows of 256 entries (entry 0 unused) of affine x[8], y[8]. */
#define GG_TABLE_WINDOWS 32
#define GG_TABLE_ENTRY_WORDS 16

/* p = 2^256 - 2^32 - 977 */
GG_CONSTANT u32 GG_P[8] = {0xFFFFFC2Fu, 0xFFFFFFFEu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                           0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
/* n, the group order */
GG_CONSTANT u32 GG_N[8] = {0xD0364141u, 0xBFD25E8Cu, 0xAF48A03Bu, 0xBAAEDCE6u,
                           0xFFFFFFFEu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
/* n - 2, the exponent of the scalar inverse */
GG_CONSTANT u32 GG_N_MINUS_2[8] = {0xD036413Fu, 0xBFD25E8Cu, 0xAF48A03Bu, 0xBAAEDCE6u,
                                   0xFFFFFFFEu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
/* 2^256 - n (129 bits) */
GG_CONSTANT u32 GG_NC[5] = {0x2FC9BEBFu, 0x402DA173u, 0x50B75FC4u, 0x45512319u, 0x1u};
/* The GLV endomorphism: lambda (a cube root of 1 mod n) maps (x, y) to (beta x, y), beta a
 * cube root of 1 mod p; and libsecp256k1's constants that split a scalar k into
 * k1 + k2 lambda with |k1|, |k2| < 2^128 (secp256k1_scalar_split_lambda). */
GG_CONSTANT u32 GG_LAMBDA[8] = {0x1B23BD72u, 0xDF02967Cu, 0x20816678u, 0x122E22EAu,
                                0x8812645Au, 0xA5261C02u, 0xC05C30E0u, 0x5363AD4Cu};
GG_CONSTANT u32 GG_BETA[8] = {0x719501EEu, 0xC1396C28u, 0x12F58995u, 0x9CF04975u,
                              0xAC3434E9u, 0x6E64479Eu, 0x657C0710u, 0x7AE96A2Bu};
GG_CONSTANT u32 GG_MINUS_B1[8] = {0x0ABFE4C3u, 0x6F547FA9u, 0x010E8828u, 0xE4437ED6u,
                                  0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u};
GG_CONSTANT u32 GG_MINUS_B2[8] = {0x3DB1562Cu, 0xD765CDA8u, 0x0774346Du, 0x8A280AC5u,
                                  0xFFFFFFFEu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
GG_CONSTANT u32 GG_G1[8] = {0x45DBB031u, 0xE893209Au, 0x71E8CA7Fu, 0x3DAA8A14u,
                            0x9284EB15u, 0xE86C90E4u, 0xA7D46BCDu, 0x3086D221u};
GG_CONSTANT u32 GG_G2[8] = {0x8AC47F71u, 0x1571B4AEu, 0x9DF506C6u, 0x221208ACu,
                            0x0ABFE4C4u, 0x6F547FA9u, 0x010E8828u, 0xE4437ED6u};

/* ------------------------------------------------------------------------------------------ */
/* 256-bit helpers                                                                             */

GG_FN void u256_copy(u32 r[8], const u32 a[8]) {
    GG_UNROLL
    for (int i = 0; i < 8; i++) r[i] = a[i];
}

GG_FN void u256_zero(u32 r[8]) {
    GG_UNROLL
    for (int i = 0; i < 8; i++) r[i] = 0;
}

GG_FN int u256_is_zero(const u32 a[8]) {
    u32 acc = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) acc |= a[i];
    return acc == 0;
}

GG_FN int u256_eq(const u32 a[8], const u32 b[8]) {
    u32 acc = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) acc |= a[i] ^ b[i];
    return acc == 0;
}

/* a >= b */
GG_FN int u256_gte(const u32 a[8], const u32 b[8]) {
    for (int i = 7; i >= 0; i--) {
        if (a[i] > b[i]) return 1;
        if (a[i] < b[i]) return 0;
    }
    return 1;
}

/* r = a - b mod 2^256; returns the borrow (0 or 1). r may alias a or b. */
GG_FN u32 u256_sub(u32 r[8], const u32 a[8], const u32 b[8]) {
    u64 borrow = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        u64 t = (u64)a[i] - (u64)b[i] - borrow;
        r[i] = (u32)t;
        borrow = (t >> 32) & 1u;
    }
    return (u32)borrow;
}

/* w = a * b, 512 bits. */
GG_FN void u256_mul_wide(u32 w[16], const u32 a[8], const u32 b[8]) {
    GG_UNROLL
    for (int i = 0; i < 16; i++) w[i] = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        u64 carry = 0;
        GG_UNROLL
        for (int j = 0; j < 8; j++) {
            u64 t = (u64)a[i] * (u64)b[j] + (u64)w[i + j] + carry;
            w[i + j] = (u32)t;
            carry = t >> 32;
        }
        w[i + 8] = (u32)carry;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Field arithmetic mod p                                                                      */

/* t (8 limbs) + c * 2^256, c < 2^40, reduced to [0, p): 2^256 = 2^32 + 977 (mod p). */
GG_FN void fe_fold(u32 r[8], const u32 t[8], u64 c) {
    u32 w[8];
    /* w = t + c * 977 + c * 2^32 */
    u64 lo = c * 977u; /* < 2^50 */
    u64 acc = (u64)t[0] + (lo & 0xFFFFFFFFu);
    w[0] = (u32)acc;
    acc >>= 32;
    acc += (u64)t[1] + (lo >> 32) + (c & 0xFFFFFFFFu);
    w[1] = (u32)acc;
    acc >>= 32;
    acc += (u64)t[2] + (c >> 32);
    w[2] = (u32)acc;
    acc >>= 32;
    GG_UNROLL
    for (int i = 3; i < 8; i++) {
        acc += (u64)t[i];
        w[i] = (u32)acc;
        acc >>= 32;
    }
    /* A carry out (acc = 1) means w + 2^256: w is then small, add 2^32 + 977 once more. */
    if (acc) {
        u64 a2 = (u64)w[0] + 977u;
        w[0] = (u32)a2;
        a2 >>= 32;
        a2 += (u64)w[1] + 1u;
        w[1] = (u32)a2;
        a2 >>= 32;
        GG_UNROLL
        for (int i = 2; i < 8; i++) {
            a2 += (u64)w[i];
            w[i] = (u32)a2;
            a2 >>= 32;
        }
    }
    /* w < 2^256 < 2p: one conditional subtraction. */
    u32 d[8];
    u32 borrow = u256_sub(d, w, GG_P);
    if (borrow) u256_copy(r, w);
    else u256_copy(r, d);
}

GG_FN void fe_add(u32 r[8], const u32 a[8], const u32 b[8]) {
    u32 t[8], d[8];
    u64 acc = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        acc += (u64)a[i] + (u64)b[i];
        t[i] = (u32)acc;
        acc >>= 32;
    }
    /* a + b < 2p: subtract p when the sum carried out or is >= p */
    u32 borrow = u256_sub(d, t, GG_P);
    if (acc || !borrow) u256_copy(r, d);
    else u256_copy(r, t);
}

GG_FN void fe_sub(u32 r[8], const u32 a[8], const u32 b[8]) {
    u32 t[8];
    u32 borrow = u256_sub(t, a, b);
    if (borrow) {
        /* t = a - b + 2^256; a - b + p = t - (2^32 + 977), and t > 2^32 + 977 here. */
        u64 acc = (u64)t[0] - 977u;
        u32 w0 = (u32)acc;
        u64 br = (acc >> 32) & 1u;
        acc = (u64)t[1] - 1u - br;
        u32 w1 = (u32)acc;
        br = (acc >> 32) & 1u;
        t[0] = w0;
        t[1] = w1;
        GG_UNROLL
        for (int i = 2; i < 8; i++) {
            acc = (u64)t[i] - br;
            t[i] = (u32)acc;
            br = (acc >> 32) & 1u;
        }
    }
    u256_copy(r, t);
}

GG_FN void fe_neg(u32 r[8], const u32 a[8]) {
    u32 z[8];
    u256_zero(z);
    fe_sub(r, z, a);
}

/* r = w mod p for a 512-bit w = L + H 2^256 = L + H (2^32 + 977) (mod p). */
GG_FN void fe_reduce512(u32 r[8], const u32 w[16]) {
    u32 t[8];
    u64 acc = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        acc += (u64)w[i] + (u64)w[8 + i] * 977u;
        if (i > 0) acc += (u64)w[8 + i - 1];
        t[i] = (u32)acc;
        acc >>= 32;
    }
    acc += (u64)w[15];
    fe_fold(r, t, acc);
}

/* r = a * b mod p. r may alias a or b. */
GG_FN void fe_mul(u32 r[8], const u32 a[8], const u32 b[8]) {
    u32 w[16];
    u256_mul_wide(w, a, b);
    fe_reduce512(r, w);
}

/* r = a^2 mod p: the 28 cross products once, doubled, plus the 8 squares. r may alias a. */
GG_FN void fe_sqr(u32 r[8], const u32 a[8]) {
    u32 w[16];
    GG_UNROLL
    for (int i = 0; i < 16; i++) w[i] = 0;
    GG_UNROLL
    for (int i = 0; i < 7; i++) {
        u64 carry = 0;
        GG_UNROLL
        for (int j = i + 1; j < 8; j++) {
            u64 t = (u64)a[i] * (u64)a[j] + (u64)w[i + j] + carry;
            w[i + j] = (u32)t;
            carry = t >> 32;
        }
        w[i + 8] = (u32)carry;
    }
    /* w = 2 w (the cross products count twice); w < 2^511 so nothing is lost */
    w[15] = w[14] >> 31;
    GG_UNROLL
    for (int i = 14; i > 0; i--) w[i] = (w[i] << 1) | (w[i - 1] >> 31);
    w[0] <<= 1;
    /* + the squares a[i]^2 at limb 2i */
    u64 carry = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        u64 sq = (u64)a[i] * (u64)a[i];
        u64 t = (u64)w[2 * i] + (sq & 0xFFFFFFFFu) + carry;
        w[2 * i] = (u32)t;
        t = (u64)w[2 * i + 1] + (sq >> 32) + (t >> 32);
        w[2 * i + 1] = (u32)t;
        carry = t >> 32;
    }
    fe_reduce512(r, w);
}

/* r = a^(2^k) */
GG_FN void fe_sqr_n(u32 r[8], const u32 a[8], int k) {
    u256_copy(r, a);
    for (int i = 0; i < k; i++) fe_sqr(r, r);
}

/* x2 = a^(2^2-1), x3, x22, x223 of the addition chains of libsecp256k1's field inverse and
 * square root. */
GG_FN void fe_chain_223(u32 x223[8], u32 x22[8], u32 x2[8], const u32 a[8]) {
    u32 x3[8], x6[8], x9[8], x11[8], x44[8], x88[8], x176[8], x220[8], t[8];
    fe_sqr(x2, a);
    fe_mul(x2, x2, a);
    fe_sqr(x3, x2);
    fe_mul(x3, x3, a);
    fe_sqr_n(t, x3, 3);
    fe_mul(x6, t, x3);
    fe_sqr_n(t, x6, 3);
    fe_mul(x9, t, x3);
    fe_sqr_n(t, x9, 2);
    fe_mul(x11, t, x2);
    fe_sqr_n(t, x11, 11);
    fe_mul(x22, t, x11);
    fe_sqr_n(t, x22, 22);
    fe_mul(x44, t, x22);
    fe_sqr_n(t, x44, 44);
    fe_mul(x88, t, x44);
    fe_sqr_n(t, x88, 88);
    fe_mul(x176, t, x88);
    fe_sqr_n(t, x176, 44);
    fe_mul(x220, t, x44);
    fe_sqr_n(t, x220, 3);
    fe_mul(x223, t, x3);
}

/* r = a^(p-2) = a^-1 (0 for a = 0). p - 2 = [223 ones] 0 [22 ones] 0000 1 0 11 0 1. */
GG_BIG void fe_inv(u32 r[8], const u32 a[8]) {
    u32 x223[8], x22[8], x2[8], t[8];
    fe_chain_223(x223, x22, x2, a);
    fe_sqr_n(t, x223, 23);
    fe_mul(t, t, x22);
    fe_sqr_n(t, t, 5);
    fe_mul(t, t, a);
    fe_sqr_n(t, t, 3);
    fe_mul(t, t, x2);
    fe_sqr_n(t, t, 2);
    fe_mul(r, t, a);
}

/* r = a^((p+1)/4); returns 1 when r^2 = a (a is a square). (p+1)/4 = [223 ones] 0 [22 ones]
 * 0000 11 00. */
GG_BIG int fe_sqrt(u32 r[8], const u32 a[8]) {
    u32 x223[8], x22[8], x2[8], t[8], c[8];
    fe_chain_223(x223, x22, x2, a);
    fe_sqr_n(t, x223, 23);
    fe_mul(t, t, x22);
    fe_sqr_n(t, t, 6);
    fe_mul(t, t, x2);
    fe_sqr_n(t, t, 2);
    fe_sqr(c, t);
    u256_copy(r, t);
    return u256_eq(c, a);
}

/* ------------------------------------------------------------------------------------------ */
/* Scalar arithmetic mod n                                                                     */

/* acc[0..len) += hi[0..hlen) * NC, with NC = 2^128 + NC[0..4): hi * NC[0..4) (4 limbs a row),
 * then hi shifted up by 128 bits. The sum must fit in len limbs. */
GG_FN void sc_muladd_nc(u32 *acc, int len, const u32 *hi, int hlen) {
    for (int i = 0; i < hlen; i++) {
        u64 carry = 0;
        GG_UNROLL
        for (int j = 0; j < 4; j++) {
            u64 t = (u64)hi[i] * (u64)GG_NC[j] + (u64)acc[i + j] + carry;
            acc[i + j] = (u32)t;
            carry = t >> 32;
        }
        for (int k = i + 4; k < len; k++) {
            u64 t = (u64)acc[k] + carry;
            acc[k] = (u32)t;
            carry = t >> 32;
        }
    }
    u64 carry = 0;
    for (int k = 4; k < len; k++) {
        u64 t = (u64)acc[k] + (k - 4 < hlen ? (u64)hi[k - 4] : 0u) + carry;
        acc[k] = (u32)t;
        carry = t >> 32;
    }
}

/* r = w mod n for a 512-bit w: fold the part above 2^256 with 2^256 = NC (mod n), NC < 2^129. */
GG_FN void sc_reduce512(u32 r[8], const u32 w[16]) {
    /* round 1: w_lo + w_hi NC < 2^256 + 2^385 < 2^386: 13 limbs */
    u32 a[13];
    GG_UNROLL
    for (int i = 0; i < 13; i++) a[i] = i < 8 ? w[i] : 0;
    sc_muladd_nc(a, 13, w + 8, 8);
    /* round 2: a_hi < 2^130 (5 limbs): a_lo + a_hi NC < 2^256 + 2^259 < 2^260: 9 limbs */
    u32 b[9];
    GG_UNROLL
    for (int i = 0; i < 9; i++) b[i] = i < 8 ? a[i] : 0;
    sc_muladd_nc(b, 9, a + 8, 5);
    /* round 3: b[8] < 16: b_lo + b[8] NC < 2^256 + 2^133, so c[8] <= 1 */
    u32 c[9];
    GG_UNROLL
    for (int i = 0; i < 9; i++) c[i] = i < 8 ? b[i] : 0;
    sc_muladd_nc(c, 9, b + 8, 1);
    /* round 4: c[8] = 1 only with c_lo < 2^133: no carry out of 256 bits */
    u32 d[9];
    GG_UNROLL
    for (int i = 0; i < 9; i++) d[i] = i < 8 ? c[i] : 0;
    sc_muladd_nc(d, 9, c + 8, 1);
    /* d < 2^256 < 2n: one conditional subtraction */
    u32 e[8];
    u32 borrow = u256_sub(e, d, GG_N);
    if (borrow) u256_copy(r, d);
    else u256_copy(r, e);
}

/* r = a mod n for any 256-bit a (a < 2^256 < 2n). */
GG_FN void sc_reduce256(u32 r[8], const u32 a[8]) {
    u32 e[8];
    u32 borrow = u256_sub(e, a, GG_N);
    if (borrow) u256_copy(r, a);
    else u256_copy(r, e);
}

/* r = -a mod n */
GG_FN void sc_neg(u32 r[8], const u32 a[8]) {
    if (u256_is_zero(a)) {
        u256_zero(r);
        return;
    }
    u256_sub(r, GG_N, a);
}

GG_FN void sc_mul(u32 r[8], const u32 a[8], const u32 b[8]) {
    u32 w[16];
    u256_mul_wide(w, a, b);
    sc_reduce512(r, w);
}

/* r = a + b mod n (a, b < n) */
GG_FN void sc_add(u32 r[8], const u32 a[8], const u32 b[8]) {
    u32 t[8], d[8];
    u64 acc = 0;
    GG_UNROLL
    for (int i = 0; i < 8; i++) {
        acc += (u64)a[i] + (u64)b[i];
        t[i] = (u32)acc;
        acc >>= 32;
    }
    u32 borrow = u256_sub(d, t, GG_N);
    if (acc || !borrow) u256_copy(r, d);
    else u256_copy(r, t);
}

/* r = round(k g / 2^384) (< 2^129) */
GG_FN void sc_mul_shift_384(u32 r[8], const u32 k[8], const u32 g[8]) {
    u32 w[16];
    u256_mul_wide(w, k, g);
    u64 acc = w[11] >> 31;
    GG_UNROLL
    for (int i = 0; i < 4; i++) {
        acc += (u64)w[12 + i];
        r[i] = (u32)acc;
        acc >>= 32;
    }
    r[4] = (u32)acc;
    r[5] = r[6] = r[7] = 0;
}

/* k = r1 + r2 lambda (mod n), r1 and r2 within 2^128 of 0 (libsecp256k1's
 * secp256k1_scalar_split_lambda). */
GG_BIG void sc_split_lambda(u32 r1[8], u32 r2[8], const u32 k[8]) {
    u32 c1[8], c2[8];
    sc_mul_shift_384(c1, k, GG_G1);
    sc_mul_shift_384(c2, k, GG_G2);
    sc_mul(c1, c1, GG_MINUS_B1);
    sc_mul(c2, c2, GG_MINUS_B2);
    sc_add(r2, c1, c2);
    sc_mul(r1, r2, GG_LAMBDA);
    sc_neg(r1, r1);
    sc_add(r1, r1, k);
}

/* r = a^(n-2) = a^-1 mod n, 4-bit fixed window. */
GG_BIG void sc_inv(u32 r[8], const u32 a[8]) {
    u32 pw[16][8];
    u256_zero(pw[0]);
    pw[0][0] = 1;
    u256_copy(pw[1], a);
    for (int k = 2; k < 16; k++) sc_mul(pw[k], pw[k - 1], a);
    u32 acc[8];
    u256_zero(acc);
    acc[0] = 1;
    for (int nib = 63; nib >= 0; nib--) {
        for (int k = 0; k < 4; k++) sc_mul(acc, acc, acc);
        u32 d = (GG_N_MINUS_2[nib >> 3] >> ((nib & 7) * 4)) & 0xFu;
        if (d) sc_mul(acc, acc, pw[d]);
    }
    u256_copy(r, acc);
}

/* ------------------------------------------------------------------------------------------ */
/* Points                                                                                      */

typedef struct {
    u32 x[8], y[8], z[8];
    int inf;
} gg_gej;

typedef struct {
    u32 x[8], y[8];
} gg_ge;

GG_FN void gej_set_inf(gg_gej *r) {
    u256_zero(r->x);
    u256_zero(r->y);
    u256_zero(r->z);
    r->inf = 1;
}

GG_FN void gej_set_ge(gg_gej *r, const gg_ge *a) {
    u256_copy(r->x, a->x);
    u256_copy(r->y, a->y);
    u256_zero(r->z);
    r->z[0] = 1;
    r->inf = 0;
}

/* r = 2a (dbl-2009-l, a = 0). r may alias a. */
GG_BIG void gej_double(gg_gej *r, const gg_gej *a) {
    if (a->inf || u256_is_zero(a->y)) {
        gej_set_inf(r);
        return;
    }
    u32 A[8], B[8], C[8], D[8], E[8], F[8], t[8], z3[8];
    fe_sqr(A, a->x);
    fe_sqr(B, a->y);
    fe_sqr(C, B);
    fe_add(t, a->x, B);
    fe_sqr(t, t);
    fe_sub(t, t, A);
    fe_sub(t, t, C);
    fe_add(D, t, t);
    fe_add(E, A, A);
    fe_add(E, E, A);
    fe_sqr(F, E);
    fe_mul(z3, a->y, a->z);
    fe_add(z3, z3, z3);
    /* X3 = F - 2D */
    fe_sub(r->x, F, D);
    fe_sub(r->x, r->x, D);
    /* Y3 = E (D - X3) - 8C */
    fe_sub(t, D, r->x);
    fe_mul(t, E, t);
    fe_add(C, C, C);
    fe_add(C, C, C);
    fe_add(C, C, C);
    fe_sub(r->y, t, C);
    u256_copy(r->z, z3);
    r->inf = 0;
}

/* r = a + b (Jacobian + Jacobian). Handles infinity, a = b (doubling) and a = -b. r may alias
 * a or b. */
GG_BIG void gej_add(gg_gej *r, const gg_gej *a, const gg_gej *b) {
    if (a->inf) {
        *r = *b;
        return;
    }
    if (b->inf) {
        *r = *a;
        return;
    }
    u32 z1z1[8], z2z2[8], u1[8], u2[8], s1[8], s2[8], h[8], rr[8], t[8];
    fe_sqr(z1z1, a->z);
    fe_sqr(z2z2, b->z);
    fe_mul(u1, a->x, z2z2);
    fe_mul(u2, b->x, z1z1);
    fe_mul(s1, a->y, b->z);
    fe_mul(s1, s1, z2z2);
    fe_mul(s2, b->y, a->z);
    fe_mul(s2, s2, z1z1);
    fe_sub(h, u2, u1);
    fe_sub(rr, s2, s1);
    if (u256_is_zero(h)) {
        if (u256_is_zero(rr)) {
            gej_double(r, a);
        } else {
            gej_set_inf(r);
        }
        return;
    }
    u32 hh[8], hhh[8], v[8], z3[8];
    fe_sqr(hh, h);
    fe_mul(hhh, h, hh);
    fe_mul(v, u1, hh);
    fe_mul(z3, a->z, b->z);
    fe_mul(z3, z3, h);
    /* X3 = R^2 - HHH - 2V */
    fe_sqr(t, rr);
    fe_sub(t, t, hhh);
    fe_sub(t, t, v);
    fe_sub(t, t, v);
    /* Y3 = R (V - X3) - S1 HHH */
    fe_sub(v, v, t);
    fe_mul(v, rr, v);
    fe_mul(s1, s1, hhh);
    fe_sub(r->y, v, s1);
    u256_copy(r->x, t);
    u256_copy(r->z, z3);
    r->inf = 0;
}

/* r = a + b (Jacobian + affine). Handles infinity of a, a = b and a = -b. r may alias a. */
GG_BIG void gej_add_ge(gg_gej *r, const gg_gej *a, const gg_ge *b) {
    if (a->inf) {
        gej_set_ge(r, b);
        return;
    }
    u32 z1z1[8], u2[8], s2[8], h[8], rr[8], t[8];
    fe_sqr(z1z1, a->z);
    fe_mul(u2, b->x, z1z1);
    fe_mul(s2, b->y, a->z);
    fe_mul(s2, s2, z1z1);
    fe_sub(h, u2, a->x);
    fe_sub(rr, s2, a->y);
    if (u256_is_zero(h)) {
        if (u256_is_zero(rr)) {
            gej_double(r, a);
        } else {
            gej_set_inf(r);
        }
        return;
    }
    u32 hh[8], hhh[8], v[8], z3[8], s1[8];
    fe_sqr(hh, h);
    fe_mul(hhh, h, hh);
    fe_mul(v, a->x, hh);
    fe_mul(z3, a->z, h);
    u256_copy(s1, a->y);
    fe_sqr(t, rr);
    fe_sub(t, t, hhh);
    fe_sub(t, t, v);
    fe_sub(t, t, v);
    fe_sub(v, v, t);
    fe_mul(v, rr, v);
    fe_mul(s1, s1, hhh);
    fe_sub(r->y, v, s1);
    u256_copy(r->x, t);
    u256_copy(r->z, z3);
    r->inf = 0;
}

/* Affine coordinates of a non-infinite point (one field inversion). */
GG_BIG void gej_to_affine(u32 x[8], u32 y[8], const gg_gej *a) {
    u32 zi[8], zi2[8], zi3[8];
    fe_inv(zi, a->z);
    fe_sqr(zi2, zi);
    fe_mul(zi3, zi2, zi);
    fe_mul(x, a->x, zi2);
    fe_mul(y, a->y, zi3);
}

/* ------------------------------------------------------------------------------------------ */
/* keccak-256 of 64 bytes                                                                      */

GG_CONSTANT u64 GG_KECCAK_RC[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808Aull, 0x8000000080008000ull,
    0x000000000000808Bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008Aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000Aull,
    0x000000008000808Bull, 0x800000000000008Bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800Aull, 0x800000008000000Aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

#define GG_ROTL64(x, k) (((x) << (k)) | ((x) >> (64 - (k))))

GG_BIG void keccak_f1600(u64 st[25]) {
    const int rotc[24] = {1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14,
                          27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44};
    const int piln[24] = {10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4,
                          15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1};
    for (int round = 0; round < 24; round++) {
        u64 bc[5];
        GG_UNROLL
        for (int i = 0; i < 5; i++)
            bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
        GG_UNROLL
        for (int i = 0; i < 5; i++) {
            u64 t = bc[(i + 4) % 5] ^ GG_ROTL64(bc[(i + 1) % 5], 1);
            GG_UNROLL
            for (int j = 0; j < 25; j += 5) st[j + i] ^= t;
        }
        u64 t = st[1];
        GG_UNROLL
        for (int i = 0; i < 24; i++) {
            int j = piln[i];
            u64 b0 = st[j];
            st[j] = GG_ROTL64(t, rotc[i]);
            t = b0;
        }
        GG_UNROLL
        for (int j = 0; j < 25; j += 5) {
            GG_UNROLL
            for (int i = 0; i < 5; i++) bc[i] = st[j + i];
            GG_UNROLL
            for (int i = 0; i < 5; i++) st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
        }
        st[0] ^= GG_KECCAK_RC[round];
    }
}

/* Big-endian byte k (0..31) of a little-endian 8-limb number. */
GG_FN u32 u256_be_byte(const u32 a[8], int k) {
    return (a[7 - (k >> 2)] >> (24 - 8 * (k & 3))) & 0xFFu;
}

/* keccak256(x_be || y_be); the digest's bytes 12..31 (the address) into out[0..5), 4 bytes a
 * word, little-endian. */
GG_FN void keccak_address(u32 out[5], const u32 x[8], const u32 y[8]) {
    u64 st[25];
    GG_UNROLL
    for (int i = 0; i < 25; i++) st[i] = 0;
    GG_UNROLL
    for (int lane = 0; lane < 8; lane++) {
        const u32 *src = lane < 4 ? x : y;
        int base = (lane & 3) * 8;
        u64 v = 0;
        GG_UNROLL
        for (int m = 0; m < 8; m++) v |= (u64)u256_be_byte(src, base + m) << (8 * m);
        st[lane] = v;
    }
    st[8] ^= 0x01ull;                /* pad: byte 64 */
    st[16] ^= 0x8000000000000000ull; /* pad: byte 135, the last of the 136-byte rate */
    keccak_f1600(st);
    /* digest bytes 12..31 = lane 1 bytes 4..7, lanes 2 and 3 */
    out[0] = (u32)(st[1] >> 32);
    out[1] = (u32)st[2];
    out[2] = (u32)(st[2] >> 32);
    out[3] = (u32)st[3];
    out[4] = (u32)(st[3] >> 32);
}

/* ------------------------------------------------------------------------------------------ */
/* Recovery                                                                                    */

/* u1 G: the sum over the 32 bytes d_w of u1 of table[w][d_w] = d_w 2^(8w) G. */
GG_BIG void mul_g(gg_gej *r, const u32 u1[8], const u32 *gtable) {
    gej_set_inf(r);
    for (int w = 0; w < GG_TABLE_WINDOWS; w++) {
        u32 d = (u1[w >> 2] >> ((w & 3) * 8)) & 0xFFu;
        if (d) {
            const u32 *e = gtable + ((u64)w * 256u + d) * GG_TABLE_ENTRY_WORDS;
            gg_ge p;
            GG_UNROLL
            for (int i = 0; i < 8; i++) {
                p.x[i] = e[i];
                p.y[i] = e[8 + i];
            }
            gej_add_ge(r, r, &p);
        }
    }
}

/* tab[k] = k P for k = 1..15 (tab[0] infinity). */
GG_BIG void point_table(gg_gej tab[16], const gg_ge *pt) {
    gej_set_inf(&tab[0]);
    gej_set_ge(&tab[1], pt);
    for (int k = 2; k < 16; k++) gej_add_ge(&tab[k], &tab[k - 1], pt);
}

/* u R, 4-bit fixed window over the whole 256-bit scalar (the path when the GLV split does not
 * give two halves below 2^128, which the constants rule out; kept so the result never depends
 * on that). */
GG_BIG void mul_point_plain(gg_gej *r, const u32 u[8], const gg_ge *pt) {
    gg_gej tab[16];
    point_table(tab, pt);
    gej_set_inf(r);
    for (int nib = 63; nib >= 0; nib--) {
        if (!r->inf) {
            gej_double(r, r);
            gej_double(r, r);
            gej_double(r, r);
            gej_double(r, r);
        }
        u32 d = (u[nib >> 3] >> ((nib & 7) * 4)) & 0xFu;
        if (d) gej_add(r, r, &tab[d]);
    }
}

GG_FN int u256_below_2_128(const u32 a[8]) { return (a[4] | a[5] | a[6] | a[7]) == 0; }

/* u R with the GLV endomorphism: u = k1 + k2 lambda, u R = k1 R + k2 (beta x, y): 128
 * doublings instead of 256, one table of R (the table of lambda R is the same with x times
 * beta). */
GG_BIG void mul_point(gg_gej *r, const u32 u[8], const gg_ge *pt) {
    u32 k1[8], k2[8];
    sc_split_lambda(k1, k2, u);
    int neg1 = 0, neg2 = 0;
    if (!u256_below_2_128(k1)) {
        sc_neg(k1, k1);
        neg1 = 1;
    }
    if (!u256_below_2_128(k2)) {
        sc_neg(k2, k2);
        neg2 = 1;
    }
    if (!u256_below_2_128(k1) || !u256_below_2_128(k2)) {
        mul_point_plain(r, u, pt);
        return;
    }
    gg_ge p1 = *pt;
    if (neg1) fe_neg(p1.y, p1.y);
    gg_gej tab[16];
    point_table(tab, &p1);
    int flip = neg1 != neg2;
    gej_set_inf(r);
    for (int nib = 31; nib >= 0; nib--) {
        if (!r->inf) {
            gej_double(r, r);
            gej_double(r, r);
            gej_double(r, r);
            gej_double(r, r);
        }
        u32 d1 = (k1[nib >> 3] >> ((nib & 7) * 4)) & 0xFu;
        if (d1) gej_add(r, r, &tab[d1]);
        u32 d2 = (k2[nib >> 3] >> ((nib & 7) * 4)) & 0xFu;
        if (d2) {
            gg_gej q = tab[d2];
            fe_mul(q.x, q.x, GG_BETA);
            if (flip) fe_neg(q.y, q.y);
            gej_add(r, r, &q);
        }
    }
}

/* Recovers one signature. Returns 1 and the address, or 0 where libsecp256k1's
 * secp256k1_ecdsa_recover (after parsing the compact signature) fails. */
GG_BIG int recover_core(u32 addr[5], const u32 z_in[8], const u32 r[8], const u32 s[8],
                       u32 parity, const u32 *gtable) {
    if (u256_is_zero(r) || u256_is_zero(s) || u256_gte(r, GG_N) || u256_gte(s, GG_N)) return 0;
    /* R: x = r (recovery ids 0 and 1 only: x < n), y^2 = x^3 + 7, y of the given parity */
    gg_ge R;
    u32 t[8], seven[8];
    u256_copy(R.x, r);
    fe_sqr(t, R.x);
    fe_mul(t, t, R.x);
    u256_zero(seven);
    seven[0] = 7;
    fe_add(t, t, seven);
    if (!fe_sqrt(R.y, t)) return 0;
    if ((R.y[0] & 1u) != (parity & 1u)) fe_neg(R.y, R.y);
    /* u1 = -z / r, u2 = s / r (mod n) */
    u32 z[8], rinv[8], u1[8], u2[8];
    sc_reduce256(z, z_in);
    sc_inv(rinv, r);
    sc_mul(u1, z, rinv);
    sc_neg(u1, u1);
    sc_mul(u2, s, rinv);
    /* Q = u1 G + u2 R */
    gg_gej a, b;
    mul_g(&a, u1, gtable);
    mul_point(&b, u2, &R);
    gej_add(&a, &a, &b);
    if (a.inf) return 0;
    u32 qx[8], qy[8];
    gej_to_affine(qx, qy, &a);
    keccak_address(addr, qx, qy);
    return 1;
}

/* The body of thread i: reads in[i], writes out[i]. */
GG_FN void recover_thread(const u32 *in, u32 *out, const u32 *gtable, u32 i) {
    const u32 *sig = in + (u64)i * GG_IN_WORDS;
    u32 z[8], r[8], s[8], addr[5];
    GG_UNROLL
    for (int k = 0; k < 8; k++) {
        z[k] = sig[k];
        r[k] = sig[8 + k];
        s[k] = sig[16 + k];
    }
    int ok = recover_core(addr, z, r, s, sig[24], gtable);
    u32 *o = out + (u64)i * GG_OUT_WORDS;
    o[0] = (u32)ok;
    GG_UNROLL
    for (int k = 0; k < 5; k++) o[1 + k] = ok ? addr[k] : 0u;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                */

#ifdef __CUDACC_RTC__

extern "C" __global__ void __launch_bounds__(128)
    gg_recover(const u32 *__restrict__ in, u32 *__restrict__ out,
               const u32 *__restrict__ gtable, u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) recover_thread(in, out, gtable, i);
}

#else

/* The kernel's loop on the host: thread i = iteration i. */
void gg_recover_host(const u32 *in, u32 *out, const u32 *gtable, u32 n) {
    for (u32 i = 0; i < n; i++) recover_thread(in, out, gtable, i);
}

/* Test hooks: the arithmetic above, one operation at a time. */
void gg_test_fe_mul(u32 r[8], const u32 a[8], const u32 b[8]) { fe_mul(r, a, b); }
void gg_test_fe_add(u32 r[8], const u32 a[8], const u32 b[8]) { fe_add(r, a, b); }
void gg_test_fe_sub(u32 r[8], const u32 a[8], const u32 b[8]) { fe_sub(r, a, b); }
void gg_test_fe_inv(u32 r[8], const u32 a[8]) { fe_inv(r, a); }
int gg_test_fe_sqrt(u32 r[8], const u32 a[8]) { return fe_sqrt(r, a); }
void gg_test_sc_mul(u32 r[8], const u32 a[8], const u32 b[8]) { sc_mul(r, a, b); }
void gg_test_sc_inv(u32 r[8], const u32 a[8]) { sc_inv(r, a); }
void gg_test_split_lambda(u32 r1[8], u32 r2[8], const u32 k[8]) { sc_split_lambda(r1, r2, k); }
void gg_test_mul_point_plain(u32 x[8], u32 y[8], const u32 u[8], const u32 px[8], const u32 py[8]) {
    gg_ge p;
    u256_copy(p.x, px);
    u256_copy(p.y, py);
    gg_gej a;
    mul_point_plain(&a, u, &p);
    gej_to_affine(x, y, &a);
}
void gg_test_keccak_address(u32 out[5], const u32 x[8], const u32 y[8]) {
    keccak_address(out, x, y);
}
/* u1 G + u2 P (P affine) to affine; returns 0 for infinity. */
int gg_test_lincomb(u32 x[8], u32 y[8], const u32 u1[8], const u32 u2[8], const u32 px[8],
                    const u32 py[8], const u32 *gtable) {
    gg_ge p;
    u256_copy(p.x, px);
    u256_copy(p.y, py);
    gg_gej a, b;
    mul_g(&a, u1, gtable);
    mul_point(&b, u2, &p);
    gej_add(&a, &a, &b);
    if (a.inf) return 0;
    gej_to_affine(x, y, &a);
    return 1;
}

#endif
