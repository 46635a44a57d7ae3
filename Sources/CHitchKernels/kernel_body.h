// The x86 kernels, included once per instruction set by kernels.c with KERNEL(name) naming the
// version and DOT(acc, u, s) adding to the eight int32 lanes of `acc` the sums of four products
// of unsigned bytes `u` with signed bytes `s` (vpdpbusd, or vpmaddubsw + vpmaddwd on AVX2). Every
// function here gets the version's target attribute from the surrounding `#pragma clang attribute`.
// (No include guard: this file is meant to be included several times.)

/// 32 nibbles of a q4 block's 16 bytes: low nibbles (weights 0..15) then high nibbles (16..31), as ggml.
static inline __attribute__((always_inline)) __m256i KERNEL(nibbles)(const uint8_t *q) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)q);
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

static inline __attribute__((always_inline)) float KERNEL(sum8)(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __attribute__((always_inline)) int KERNEL(sum8i)(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

/// Prefetch whole row pairs at least 4 KB ahead: short rows (q4_1 at 576 columns is 360 bytes)
/// would otherwise leave too little in flight to cover the memory latency.
static inline __attribute__((always_inline)) size_t KERNEL(ahead)(size_t row_bytes) {
    const size_t pair = 2 * row_bytes;
    return pair * ((4096 + pair - 1) / pair);
}

// The three kernels share one shape: two rows at a time (each activation load feeds both), per
// block the integer lanes, converted to float and multiplied-added by the product of the two scales
// (as ggml's vec_dot), the next rows prefetched while these are read.

/// 32 bytes of 16 where bit i of the 32-bit word at `qh` is set (byte i), 0 elsewhere: q5_0/q5_1's
/// fifth bits. Byte i is a copy of byte i / 8 of the word, tested against its own bit i % 8.
static inline __attribute__((always_inline)) __m256i KERNEL(fifth_bits)(const uint8_t *qh) {
    uint32_t bits;
    memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits),
                                               _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                                 0x0101010101010101, 0x0000000000000000));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(16));
}

/// The q4_0, q4_1, q5_0 and q5_1 kernels (constant flags, folded per wrapper): the nibbles, with the
/// fifth bits or'ed in for q5_*; q*_0 weights are q - 8 (q - 16), made by the offset lanes (-8 times
/// the activations' sums, doubled for q5_0); q*_1 weights are d * q + m, so the minimum adds m * (sum
/// of x) = m * s per block.
static inline __attribute__((always_inline)) void KERNEL(q4or5)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                const hitch_q8_activations *x, float *y, int has_minimum, int five) {
    const size_t block_bytes = 18 + 2 * has_minimum + 4 * five, bits = 2 + 2 * has_minimum, nibbles = bits + 4 * five;
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float m0 = 0, m1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + block_bytes * b, *b1 = w1 + block_bytes * b;
            __builtin_prefetch(w0 + ahead + 2 * block_bytes * b, 0, 3);   // two blocks per block: the whole pair by the end
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->values + 32 * b));
            const __m256i offset = has_minimum ? _mm256_setzero_si256()
                : _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b)), five);
            __m256i q0 = KERNEL(nibbles)(b0 + nibbles), q1 = KERNEL(nibbles)(b1 + nibbles);
            if (five) {
                q0 = _mm256_or_si256(q0, KERNEL(fifth_bits)(b0 + bits));
                q1 = _mm256_or_si256(q1, KERNEL(fifth_bits)(b1 + bits));
            }
            const __m256i p0 = DOT(offset, q0, xv), p1 = DOT(offset, q1, xv);
            const float xd = x->scales[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
            if (has_minimum) {
                m0 += _cvtsh_ss(*(const uint16_t *)(b0 + 2)) * x->sums[b];
                m1 += _cvtsh_ss(*(const uint16_t *)(b1 + 2)) * x->sums[b];
            }
        }
        y[r] = KERNEL(sum8)(a0) + m0;
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1) + m1;
    }
}

#define Q4OR5(name, has_minimum, five)                                                                                    \
    static void KERNEL(name)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) { \
        KERNEL(q4or5)(w, row_bytes, rows, blocks, x, y, has_minimum, five);                                               \
    }
Q4OR5(q4_0, 0, 0)
Q4OR5(q4_1, 1, 0)
Q4OR5(q5_0, 0, 1)
Q4OR5(q5_1, 1, 1)
#undef Q4OR5

static void KERNEL(q8_0)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 34 * b, *b1 = w1 + 34 * b;
            __builtin_prefetch(w0 + ahead + 2 * 34 * b, 0, 3);   // two blocks per block: the whole pair by the end
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->values + 32 * b));
            const __m256i q0 = _mm256_loadu_si256((const __m256i *)(b0 + 2));
            const __m256i q1 = _mm256_loadu_si256((const __m256i *)(b1 + 2));
            // Signed by signed as unsigned by signed: |q| times x with q's sign (ggml's trick).
            const __m256i p0 = DOT(_mm256_setzero_si256(), _mm256_sign_epi8(q0, q0), _mm256_sign_epi8(xv, q0));
            const __m256i p1 = DOT(_mm256_setzero_si256(), _mm256_sign_epi8(q1, q1), _mm256_sign_epi8(xv, q1));
            const float xd = x->scales[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
        }
        y[r] = KERNEL(sum8)(a0);
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1);
    }
}

// The K-quants: blocks of 256 against ggml's q8_K activations. Each 32-byte DOT gives eight lanes
// of four products; a lane's sum is below 2^15 (4 * 63 * 127 at most), so two DOTs pack into one
// vector of int16 (vpackssdw, which interleaves per 128-bit half: 4 lanes of the first, 4 of the
// second) and one vpmaddwd by the matching sub-block scales gives int32 lanes again.

/// The scales of two consecutive sub-blocks in vpackssdw's order: per 128-bit half, four int16
/// copies of `first`, then four of `second`.
static inline __attribute__((always_inline)) __m256i KERNEL(pair_scales)(int first, int second) {
    const __m128i half = _mm_unpacklo_epi64(_mm_set1_epi16((short)first), _mm_set1_epi16((short)second));
    return _mm256_set_m128i(half, half);
}

/// One q4_K or q5_K block (`five`) of one row, per pair p of sub-blocks (64 weights): int32 lanes
/// `pairs[p]` summing to the exact integer sum of scale times q * x, and `mins[p]`, the exact sum of
/// min times the activations' sums over the pair's two sub-blocks.
static inline __attribute__((always_inline)) void KERNEL(k4or5_block)(const uint8_t *block, const int8_t *xq, const int16_t *sums,
                                                                      int five, __m256i pairs[4], int mins[4]) {
    uint8_t scales[8], minimums[8];
    unpack_k_scales(block + 4, scales, minimums);
    const uint8_t *qs = block + (five ? 48 : 16);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256i high = five ? _mm256_loadu_si256((const __m256i *)(block + 16)) : _mm256_setzero_si256();
    for (int j = 0; j < 4; j++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
        __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        if (five) {
            // Bits 2j and 2j + 1 of each qh byte, moved to bit 4 (bit 0 after the shift, then << 4).
            const __m256i one = _mm256_set1_epi8(1);
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, one), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), one), 4));
            high = _mm256_srli_epi16(high, 2);
        }
        const __m256i p_lo = DOT(_mm256_setzero_si256(), lo, _mm256_loadu_si256((const __m256i *)(xq + 64 * j)));
        const __m256i p_hi = DOT(_mm256_setzero_si256(), hi, _mm256_loadu_si256((const __m256i *)(xq + 64 * j + 32)));
        pairs[j] = _mm256_madd_epi16(_mm256_packs_epi32(p_lo, p_hi), KERNEL(pair_scales)(scales[2 * j], scales[2 * j + 1]));
        mins[j] = minimums[2 * j] * (sums[4 * j] + sums[4 * j + 1]) + minimums[2 * j + 1] * (sums[4 * j + 2] + sums[4 * j + 3]);
    }
}

static inline __attribute__((always_inline)) __m256i KERNEL(sum_pairs)(const __m256i pairs[4]) {
    return _mm256_add_epi32(_mm256_add_epi32(pairs[0], pairs[1]), _mm256_add_epi32(pairs[2], pairs[3]));
}

static inline __attribute__((always_inline)) void KERNEL(k4or5)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                const hitch_q8_activations *x, float *y, int five) {
    const size_t block_bytes = five ? 176 : 144;
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float m0 = 0, m1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + block_bytes * b, *b1 = w1 + block_bytes * b;
            for (size_t line = 0; line < 2 * block_bytes; line += 64) __builtin_prefetch(w0 + ahead + 2 * block_bytes * b + line, 0, 3);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            __m256i pairs0[4], pairs1[4];
            int mins0[4], mins1[4];
            KERNEL(k4or5_block)(b0, xq, sums, five, pairs0, mins0);
            KERNEL(k4or5_block)(b1, xq, sums, five, pairs1, mins1);
            const __m256i p0 = KERNEL(sum_pairs)(pairs0), p1 = KERNEL(sum_pairs)(pairs1);
            const int min0 = mins0[0] + mins0[1] + mins0[2] + mins0[3], min1 = mins1[0] + mins1[1] + mins1[2] + mins1[3];
            const float xd = x->k_scales[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
            m0 += _cvtsh_ss(*(const uint16_t *)(b0 + 2)) * xd * (float)min0;
            m1 += _cvtsh_ss(*(const uint16_t *)(b1 + 2)) * xd * (float)min1;
        }
        y[r] = KERNEL(sum8)(a0) - m0;
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1) - m1;
    }
}

/// One row's q4_K block into its two float accumulators, as llama.cpp's repacked kernels step them:
/// the integer sums times d * d_x and dmin * d_x, fused; per block (gemv) or per pair (gemm).
static inline __attribute__((always_inline)) void KERNEL(q4_K_step)(const __m256i dots[4], const int mins[4], float d, float dmin,
                                                                    int per_pair, float *total, float *minimum) {
    if (per_pair) {
        for (int j = 0; j < 4; j++) {
            *total = fmaf((float)KERNEL(sum8i)(dots[j]), d, *total);
            *minimum = fmaf((float)mins[j], dmin, *minimum);
        }
    } else {
        *total = fmaf((float)KERNEL(sum8i)(KERNEL(sum_pairs)(dots)), d, *total);
        *minimum = fmaf((float)(mins[0] + mins[1] + mins[2] + mins[3]), dmin, *minimum);
    }
}

/// q4_K as llama.cpp's repacked kernels sum it: per row, the scaled integer sums times d * d_x and
/// the min sums times dmin * d_x accumulate (fused) in two floats, subtracted at the end; one step
/// per block (its gemv: one token), or per pair of sub-blocks (its gemm: `x->q4_K_gemm`).
static void KERNEL(q4_K)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    const int per_pair = x->q4_K_gemm;
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        float a0 = 0, a1 = 0, m0 = 0, m1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 144 * b, *b1 = w1 + 144 * b;
            for (size_t line = 0; line < 2 * 144; line += 64) __builtin_prefetch(w0 + ahead + 2 * 144 * b + line, 0, 3);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            __m256i dots0[4], dots1[4];
            int mins0[4], mins1[4];
            KERNEL(k4or5_block)(b0, xq, sums, 0, dots0, mins0);
            KERNEL(k4or5_block)(b1, xq, sums, 0, dots1, mins1);
            const float xd = x->k_scales[b];
            KERNEL(q4_K_step)(dots0, mins0, _cvtsh_ss(*(const uint16_t *)b0) * xd, _cvtsh_ss(*(const uint16_t *)(b0 + 2)) * xd,
                              per_pair, &a0, &m0);
            KERNEL(q4_K_step)(dots1, mins1, _cvtsh_ss(*(const uint16_t *)b1) * xd, _cvtsh_ss(*(const uint16_t *)(b1 + 2)) * xd,
                              per_pair, &a1, &m1);
        }
        y[r] = a0 - m0;
        if (r + 1 < rows) y[r + 1] = a1 - m1;
    }
}

static void KERNEL(q5_K)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    KERNEL(k4or5)(w, row_bytes, rows, blocks, x, y, 1);
}

/// One q6_K block of one row in ggml's vec_dot lanes: per 32 weights, vpmaddubsw of the 6-bit q
/// (0..63) with the activations, vpmaddwd by the scale of each 16, added into eight int32 lanes
/// (lane i: weights 4i..4i+3 of every run of 32); less 32 * (scale_s * the activations' sum over run s).
static inline __attribute__((always_inline)) __m256i KERNEL(q6_K_block)(const uint8_t *block, const int8_t *xq, const int16_t *sums) {
    const int8_t *scales = (const int8_t *)(block + 192);
    const __m256i m3 = _mm256_set1_epi8(3), m15 = _mm256_set1_epi8(15);
    const __m128i scale_bytes = _mm_loadu_si128((const __m128i *)scales);
    const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)sums), _mm256_cvtepi8_epi16(scale_bytes)), 5);
    __m256i total = _mm256_setzero_si256();
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = block + 64 * h;
        const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql), l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(block + 128 + 32 * h));
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(l0, m15), _mm256_slli_epi16(_mm256_and_si256(qh, m3), 4)),
            _mm256_or_si256(_mm256_and_si256(l1, m15), _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(12)), 2)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m15), _mm256_and_si256(qh, _mm256_set1_epi8(48))),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m15), _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(-64)), 2)),
        };
        for (int k = 0; k < 4; k++) {
            const int s = 8 * h + 2 * k;
            const __m256i scale16 = _mm256_set_m128i(_mm_set1_epi16(scales[s + 1]), _mm_set1_epi16(scales[s]));
            const __m256i products = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(xq + 128 * h + 32 * k)));
            total = _mm256_add_epi32(total, _mm256_madd_epi16(scale16, products));
        }
    }
    return _mm256_sub_epi32(total, offset);
}

/// q6_K as llama.cpp sums it: one token (vec_dot) fuses each block's eight lanes times d * d_x into
/// eight float lanes, added at the end; a prompt row of its tiled matmul (`x->q6_K_tiled`) takes the
/// block's exact sum times d, fused by d_x into one float.
static void KERNEL(q6_K)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    const int tiled = x->q6_K_tiled;
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float t0 = 0, t1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 210 * b, *b1 = w1 + 210 * b;
            for (size_t line = 0; line < 2 * 210; line += 64) __builtin_prefetch(w0 + ahead + 2 * 210 * b + line, 0, 3);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            const __m256i p0 = KERNEL(q6_K_block)(b0, xq, sums), p1 = KERNEL(q6_K_block)(b1, xq, sums);
            const float xd = x->k_scales[b];
            const float d0 = _cvtsh_ss(*(const uint16_t *)(b0 + 208)), d1 = _cvtsh_ss(*(const uint16_t *)(b1 + 208));
            if (tiled) {
                t0 = fmaf((float)KERNEL(sum8i)(p0) * d0, xd, t0);
                t1 = fmaf((float)KERNEL(sum8i)(p1) * d1, xd, t1);
            } else {
                a0 = _mm256_fmadd_ps(_mm256_set1_ps(d0 * xd), _mm256_cvtepi32_ps(p0), a0);
                a1 = _mm256_fmadd_ps(_mm256_set1_ps(d1 * xd), _mm256_cvtepi32_ps(p1), a1);
            }
        }
        y[r] = tiled ? t0 : KERNEL(sum8)(a0);
        if (r + 1 < rows) y[r + 1] = tiled ? t1 : KERNEL(sum8)(a1);
    }
}
