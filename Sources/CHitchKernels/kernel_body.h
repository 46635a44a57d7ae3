// The x86 kernels, included once per instruction set by kernels.c with KERNEL(name) naming the
// version and DOT(acc, u, s) adding to the eight int32 lanes of `acc` the sums of four products
// of unsigned bytes `u` with signed bytes `s` (vpdpbusd, or vpmaddubsw + vpmaddwd on AVX2), and
// SCALED_ADD(acc, a, b) adding to them the sums of adjacent products of int16 lanes (vpdpwssd, or
// vpmaddwd + vpaddd on AVX2); the AVX-512 VNNI version also defines DOT512, DOT on sixteen lanes.
// Every function here gets the version's target attribute from the surrounding `#pragma clang attribute`.
// (No include guard: this file is meant to be included several times.)

/// 32 nibbles of a q4 block's 16 bytes: low nibbles (weights 0..15) then high nibbles (16..31), as ggml.
static inline __attribute__((always_inline)) __m256i KERNEL(nibbles)(const uint8_t *q) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)q);
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/// The f16 at `p` as a float, through a whole-register vmovd. (_cvtsh_ss, or anything the compiler
/// sees only the low word of, becomes a vpinsrw that merges into whatever register is at hand, an
/// accumulator sometimes, which then chains each block's scale to the last block's sum: q8_0 took
/// 1.76 instead of 0.97 ns per block and row. The empty asm makes every bit of the register count.)
static inline __attribute__((always_inline)) float KERNEL(half)(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    __m128i v = _mm_cvtsi32_si128(h);
    __asm__("" : "+x"(v));
    return _mm_cvtss_f32(_mm_cvtph_ps(v));
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

/// The f16 scale d (or d and minimum m: `pair`) that starts each of four blocks, as floats:
/// [d0, d1, d2, d3, -, -, -, -] or [d0, m0, d1, m1, d2, m2, d3, m3]. Each block is read as 32 bits
/// (d and the next two bytes), so the words gather with two unpacks and convert in one instruction.
static inline __attribute__((always_inline)) __m256 KERNEL(four_heads)(const uint8_t *b0, const uint8_t *b1, const uint8_t *b2,
                                                                        const uint8_t *b3, int pair) {
    uint32_t h0, h1, h2, h3;
    memcpy(&h0, b0, 4);
    memcpy(&h1, b1, 4);
    memcpy(&h2, b2, 4);
    memcpy(&h3, b3, 4);
    const __m128i v0 = _mm_cvtsi32_si128((int)h0), v1 = _mm_cvtsi32_si128((int)h1), v2 = _mm_cvtsi32_si128((int)h2), v3 = _mm_cvtsi32_si128((int)h3);
    if (pair) return _mm256_cvtph_ps(_mm_unpacklo_epi64(_mm_unpacklo_epi32(v0, v1), _mm_unpacklo_epi32(v2, v3)));
    return _mm256_castps128_ps256(_mm_cvtph_ps(_mm_unpacklo_epi32(_mm_unpacklo_epi16(v0, v1), _mm_unpacklo_epi16(v2, v3))));
}

/// 32 weights of a q4/q5 block as bytes: the 16 bytes of nibbles broadcast to both halves, the upper
/// half shifted by 4 (its high nibbles) and masked; the fifth bits or'ed in for q5_*.
static inline __attribute__((always_inline)) __m256i KERNEL(small_weights)(const uint8_t *block, size_t bits, size_t nibbles, int five) {
    const __m256i q = _mm256_and_si256(_mm256_srlv_epi64(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(block + nibbles))),
                                                         _mm256_set_epi64x(4, 4, 0, 0)),
                                       _mm256_set1_epi8(0x0F));
    if (!five) return q;
#ifdef KERNEL_MASKS
    // AVX-512: the 32 bits are a byte mask, loaded as one; 16 is added where a bit is set.
    uint32_t fifth;
    memcpy(&fifth, block + bits, 4);
    return _mm256_mask_add_epi8(q, _cvtu32_mask32(fifth), q, _mm256_set1_epi8(16));
#else
    return _mm256_or_si256(q, KERNEL(fifth_bits)(block + bits));
#endif
}

/// The q4_0, q4_1, q5_0 and q5_1 kernels (constant flags, folded per wrapper), four rows at a time
/// (then one): q*_0 weights are q - 8 (q - 16), made by the offset lanes (-8 times the activations'
/// sums, doubled for q5_0); q*_1 weights are d * q + m, so the minimum adds m * (sum of x) = m * s
/// per block, fused. The rows' f16 scales (and minimums) convert in one instruction. Per row and
/// block: eight int32 lanes (lane l: weights 4l..4l+3) times d * d_x fused into eight float lanes.
/// (With 512-bit vpdpbusd, q5_0 and q5_1 run `q5` below, which leaves its last rows to this.)
static inline __attribute__((always_inline)) void KERNEL(q4or5)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                const hitch_q8_activations *x, float *y, int has_minimum, int five) {
    const size_t block_bytes = 18 + 2 * has_minimum + 4 * five, bits = 2 + 2 * has_minimum, nibbles = bits + 4 * five;
    const size_t group = 4 * row_bytes, ahead = group * ((4096 + group - 1) / group);
    // Lanes of `four_heads` holding each row's d.
    const int step = has_minimum ? 2 : 1;
    const __m256i d1 = _mm256_set1_epi32(step), d2 = _mm256_set1_epi32(2 * step), d3 = _mm256_set1_epi32(3 * step);
    long r = 0;
    for (; r + 3 < rows; r += 4) {
        const uint8_t *w0 = w + (size_t)r * row_bytes, *w1 = w0 + row_bytes, *w2 = w1 + row_bytes, *w3 = w2 + row_bytes;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        __m256 minimums = _mm256_setzero_ps();   // [-, m0, -, m1, -, m2, -, m3]
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + block_bytes * b, *b1 = w1 + block_bytes * b, *b2 = w2 + block_bytes * b, *b3 = w3 + block_bytes * b;
            // Four blocks per block (up to 96 bytes): the whole next group by the end.
            __builtin_prefetch(w0 + ahead + 4 * block_bytes * b, 0, 3);
            __builtin_prefetch(w0 + ahead + 4 * block_bytes * b + 64, 0, 3);
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->values + 32 * b));
            const __m256i offset = has_minimum ? _mm256_setzero_si256()
                : _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b)), five);
            const __m256i p0 = DOT(offset, KERNEL(small_weights)(b0, bits, nibbles, five), xv);
            const __m256i p1 = DOT(offset, KERNEL(small_weights)(b1, bits, nibbles, five), xv);
            const __m256i p2 = DOT(offset, KERNEL(small_weights)(b2, bits, nibbles, five), xv);
            const __m256i p3 = DOT(offset, KERNEL(small_weights)(b3, bits, nibbles, five), xv);
            const __m256 heads = KERNEL(four_heads)(b0, b1, b2, b3, has_minimum);
            const __m256 scales = _mm256_mul_ps(heads, _mm256_set1_ps(x->scales[b]));
            a0 = _mm256_fmadd_ps(_mm256_broadcastss_ps(_mm256_castps256_ps128(scales)), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(scales, d1), _mm256_cvtepi32_ps(p1), a1);
            a2 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(scales, d2), _mm256_cvtepi32_ps(p2), a2);
            a3 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(scales, d3), _mm256_cvtepi32_ps(p3), a3);
            if (has_minimum) minimums = _mm256_fmadd_ps(heads, _mm256_set1_ps(x->sums[b]), minimums);
        }
        float m[8];
        _mm256_storeu_ps(m, minimums);
        y[r] = KERNEL(sum8)(a0) + (has_minimum ? m[1] : 0.0f);
        y[r + 1] = KERNEL(sum8)(a1) + (has_minimum ? m[3] : 0.0f);
        y[r + 2] = KERNEL(sum8)(a2) + (has_minimum ? m[5] : 0.0f);
        y[r + 3] = KERNEL(sum8)(a3) + (has_minimum ? m[7] : 0.0f);
    }
    for (; r < rows; r++) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        __m256 a0 = _mm256_setzero_ps();
        float minimum = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + block_bytes * b;
            const __m256i offset = has_minimum ? _mm256_setzero_si256()
                : _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b)), five);
            const __m256i p0 = DOT(offset, KERNEL(small_weights)(b0, bits, nibbles, five), _mm256_loadu_si256((const __m256i *)(x->values + 32 * b)));
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(KERNEL(half)(b0) * x->scales[b]), _mm256_cvtepi32_ps(p0), a0);
            if (has_minimum) minimum = fmaf(KERNEL(half)(b0 + 2), x->sums[b], minimum);
        }
        y[r] = KERNEL(sum8)(a0) + minimum;
    }
}

#define Q4OR5(name, has_minimum, five)                                                                                    \
    static void KERNEL(name)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) { \
        KERNEL(q4or5)(w, row_bytes, rows, blocks, x, y, has_minimum, five);                                               \
    }
Q4OR5(q4_0, 0, 0)
Q4OR5(q4_1, 1, 0)
#ifndef DOT512
Q4OR5(q5_0, 0, 1)
Q4OR5(q5_1, 1, 1)
#endif
#undef Q4OR5

#ifdef DOT512
/// The 32 weights of each of two q5 blocks (`first`, `second`) as bytes, the first block's in the
/// lower half of the register: each block's 16 bytes of nibbles in two 128-bit lanes (the upper one
/// shifted by 4: its high nibbles), masked, 16 or'ed in where its 32 fifth bits (one 64-bit byte mask
/// for both) are set.
static inline __attribute__((always_inline)) __m512i KERNEL(q5_pair)(const uint8_t *first, const uint8_t *second, size_t bits, size_t nibbles) {
    const __m512i both = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(first + nibbles))),
                                                     0xFF00, _mm_loadu_si128((const __m128i *)(second + nibbles)));
    uint32_t fifth_first, fifth_second;
    memcpy(&fifth_first, first + bits, 4);
    memcpy(&fifth_second, second + bits, 4);
    const __m512i sixteens = _mm512_maskz_mov_epi8(_cvtu64_mask64((uint64_t)fifth_second << 32 | fifth_first), _mm512_set1_epi8(16));
    // (shifted & 0x0F) | sixteens in one vpternlogd (0xEA: A & B | C).
    return _mm512_ternarylogic_epi32(_mm512_srlv_epi64(both, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)), _mm512_set1_epi8(0x0F), sixteens, 0xEA);
}

/// The eight float lanes of each half of `v`, summed as `sum8`: [lower, upper].
static inline __attribute__((always_inline)) void KERNEL(sum8_halves)(__m512 v, float *lower, float *upper) {
    *lower = KERNEL(sum8)(_mm512_castps512_ps256(v));
    *upper = KERNEL(sum8)(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/// q5_0 and q5_1 with 512-bit vpdpbusd: the integer lanes and float steps of `q4or5` (so the same
/// floats, bit for bit), two rows to a register, about 40 % fewer instructions per block and row.
/// Four rows at a time (eight, sharing more loads, decoded slower from memory); the last rows as
/// `q4or5` does them.
static inline __attribute__((always_inline)) void KERNEL(q5)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                             const hitch_q8_activations *x, float *y, int has_minimum) {
    const size_t block_bytes = 22 + 2 * has_minimum, bits = 2 + 2 * has_minimum, nibbles = bits + 4;
    const size_t group = 4 * row_bytes, ahead = group * ((4096 + group - 1) / group);
    // Lanes of `four_heads` holding each row's d, eight times each: rows 0 and 1, rows 2 and 3.
    const int step = has_minimum ? 2 : 1;
    const __m512i rows01 = _mm512_set_epi32(step, step, step, step, step, step, step, step, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i rows23 = _mm512_add_epi32(rows01, _mm512_set1_epi32(2 * step));
    long r = 0;
    for (; r + 3 < rows; r += 4) {
        const uint8_t *w0 = w + (size_t)r * row_bytes, *w1 = w0 + row_bytes, *w2 = w1 + row_bytes, *w3 = w2 + row_bytes;
        __m512 a01 = _mm512_setzero_ps(), a23 = a01;
        __m256 minimums = _mm256_setzero_ps();   // [-, m0, -, m1, -, m2, -, m3]
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + block_bytes * b, *b1 = w1 + block_bytes * b, *b2 = w2 + block_bytes * b, *b3 = w3 + block_bytes * b;
            __builtin_prefetch(w0 + ahead + 4 * block_bytes * b, 0, 3);
            __builtin_prefetch(w0 + ahead + 4 * block_bytes * b + 64, 0, 3);
            const __m512i xv = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->values + 32 * b)));
            const __m512i offset = has_minimum ? _mm512_setzero_si512()
                : _mm512_slli_epi32(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b))), 1);
            const __m512i p01 = DOT512(offset, KERNEL(q5_pair)(b0, b1, bits, nibbles), xv);
            const __m512i p23 = DOT512(offset, KERNEL(q5_pair)(b2, b3, bits, nibbles), xv);
            const __m256 heads = KERNEL(four_heads)(b0, b1, b2, b3, has_minimum);
            const __m512 scales = _mm512_castps256_ps512(_mm256_mul_ps(heads, _mm256_set1_ps(x->scales[b])));
            a01 = _mm512_fmadd_ps(_mm512_permutexvar_ps(rows01, scales), _mm512_cvtepi32_ps(p01), a01);
            a23 = _mm512_fmadd_ps(_mm512_permutexvar_ps(rows23, scales), _mm512_cvtepi32_ps(p23), a23);
            if (has_minimum) minimums = _mm256_fmadd_ps(heads, _mm256_set1_ps(x->sums[b]), minimums);
        }
        float m[8], s[4];
        _mm256_storeu_ps(m, minimums);
        KERNEL(sum8_halves)(a01, &s[0], &s[1]);
        KERNEL(sum8_halves)(a23, &s[2], &s[3]);
        for (int k = 0; k < 4; k++) y[r + k] = s[k] + (has_minimum ? m[2 * k + 1] : 0.0f);
    }
    if (r < rows) KERNEL(q4or5)(w + (size_t)r * row_bytes, row_bytes, rows - r, blocks, x, y + r, has_minimum, 1);
}

static void KERNEL(q5_0)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    KERNEL(q5)(w, row_bytes, rows, blocks, x, y, 0);
}
static void KERNEL(q5_1)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    KERNEL(q5)(w, row_bytes, rows, blocks, x, y, 1);
}
#endif

/// The four bytes at `p` in every 32-bit lane.
static inline __attribute__((always_inline)) __m256i KERNEL(broadcast4)(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/// Interleaved q4_0 (the layout: include/hitch_kernels.h) in the float order of llama.cpp's
/// repacked q4_0 (its q4_0x8 gemv and gemm, which it runs for every q4_0 matrix of a multiple of 8
/// rows on an AVX2 machine): per row, each block's exact integer sum of (q - 8) x times d * d_x,
/// fused into one float; no lanes. Eight rows at a time, a row per 32-bit lane: each 32-byte load
/// holds a 4-byte slice of the eight rows, multiplied by those four activations broadcast, so the
/// lanes are the rows' sums with no reduction; the -8 is the activations' precomputed block offset;
/// the eight scales convert in one instruction and one vfmadd steps all eight rows.
static void KERNEL(q4_0_rows8)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (long g = 0; g < rows / 8; g++) {
        const uint8_t *group = w + (size_t)g * 8 * row_bytes;
        __m256 total = _mm256_setzero_ps();
        // One sequential stream (the scales inline, 144 bytes a block): the hardware prefetchers
        // keep ahead of it; software prefetches measured no faster.
        for (long b = 0; b < blocks; b++) {
            const uint8_t *head = group + 144 * b, *q = head + 16;
            const int8_t *xq = x->values + 32 * b;
            const __m256i offset = _mm256_set1_epi32(x->block_offsets[b]);
#ifdef KERNEL_EXACT_DOT
            // vpdpbusd does not saturate, so the high nibbles need no shift: masked in place they are
            // 16 q, and their sums divide by 16 exactly once at the end.
            const __m256i high4 = _mm256_set1_epi8((char)0xF0);
            __m256i low = offset, high = _mm256_setzero_si256();
            for (int c = 0; c < 4; c++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * c));
                low = DOT(low, _mm256_and_si256(v, low4), KERNEL(broadcast4)(xq + 4 * c));
                high = DOT(high, _mm256_and_si256(v, high4), KERNEL(broadcast4)(xq + 16 + 4 * c));
            }
            const __m256i sums = _mm256_add_epi32(low, _mm256_srai_epi32(high, 4));
#else
            // The eight vpmaddubsw pairs add as int16 before one vpmaddwd: each pair is within
            // +-2 * 15 * 128, eight of them within +-30720, so nothing saturates.
            __m256i pairs = _mm256_setzero_si256();
            for (int c = 0; c < 4; c++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * c));
                pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(v, low4), KERNEL(broadcast4)(xq + 4 * c)));
                pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                                                                     KERNEL(broadcast4)(xq + 16 + 4 * c)));
            }
            const __m256i sums = _mm256_add_epi32(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)), offset);
#endif
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)head));
            total = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_mul_ps(d, _mm256_set1_ps(x->scales[b])), total);
        }
        _mm256_storeu_ps(y + 8 * g, total);
    }
}

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
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(KERNEL(half)(b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(KERNEL(half)(b1) * xd), _mm256_cvtepi32_ps(p1), a1);
        }
        y[r] = KERNEL(sum8)(a0);
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1);
    }
}

// The K-quants: blocks of 256 against ggml's q8_K activations. Each 32-byte DOT gives eight lanes
// of four products; a lane's sum is below 2^15 (4 * 63 * 127 at most), so two DOTs pack into one
// vector of int16 (vpackssdw, which interleaves per 128-bit half: 4 lanes of the first, 4 of the
// second) and one vpmaddwd by the matching sub-block scales gives int32 lanes again.

/// vpshufb indexes that put, in each 128-bit half, byte `first` zero-extended into int16 lanes 0-3
/// and byte `second` into lanes 4-7 (an index byte of 0x80 clears its byte).
static inline __attribute__((always_inline)) __m256i KERNEL(spread_bytes)(int first, int second) {
    const short a = (short)(0x8000 | first), b = (short)(0x8000 | second);
    return _mm256_broadcastsi128_si256(_mm_set_epi16(b, b, b, b, a, a, a, a));
}

/// The eight 6-bit scales (bytes 0-7) and eight 6-bit minimums (bytes 8-15) packed in the 12 bytes
/// at `packed` (layout as unpack_k_scales), in both 128-bit halves, unpacked in vector registers (no
/// scalar code per sub-block). Reads 16 bytes: the packed scales sit 4 bytes into a block of 144 or 176.
static inline __attribute__((always_inline)) __m256i KERNEL(k_scales)(const uint8_t *packed) {
    const __m128i v = _mm_loadu_si128((const __m128i *)packed);   // 32-bit lanes a, b, c (and 4 bytes unused)
    const __m128i low = _mm_and_si128(v, _mm_set1_epi8(0x3F));    // scales 0-3 | minimums 0-3
    // The spare top 2 bits of each byte of a and b, as bits 4-5 (a 32-bit shift: bits 6-7 of the
    // byte above land in bits 0-1, under the mask).
    const __m128i top = _mm_and_si128(_mm_srli_epi32(v, 2), _mm_set1_epi8(0x30));
    // c in lanes 0 and 1, the second shifted by 4: its low nibbles, then its high nibbles.
    const __m128i c = _mm_srlv_epi32(_mm_shuffle_epi32(v, 0xAA), _mm_set_epi32(0, 0, 4, 0));
    const __m128i high = _mm_or_si128(_mm_and_si128(c, _mm_set1_epi8(0x0F)), top);   // scales 4-7 | minimums 4-7
    return _mm256_broadcastsi128_si256(_mm_unpacklo_epi32(low, high));
}

/// Bytes of `v` shifted left by `n` (right by -n), -3 <= n <= 4, on 16-bit lanes: bit 4 of each
/// byte is then bit 4 - n of the same byte, the only bit the callers keep.
static inline __attribute__((always_inline)) __m256i KERNEL(shift_to_bit4)(__m256i v, int n) {
    return n >= 0 ? _mm256_slli_epi16(v, n) : _mm256_srli_epi16(v, -n);
}

/// One q4_K block of one row, per pair p of sub-blocks (64 weights): int32 lanes `pairs[p]` summing
/// to the exact integer sum of scale times q * x, and lane p of `mins`, the exact sum of min times
/// the activations' sums over the pair's two sub-blocks (one vpmaddwd gives all four).
static inline __attribute__((always_inline)) void KERNEL(q4_K_block)(const uint8_t *block, const int8_t *xq, const int16_t *sums,
                                                                     __m256i pairs[4], __m128i *mins) {
    const __m256i scales = KERNEL(k_scales)(block + 4);
    // Minimums (bytes 8-15) zero-extended to int16, by the activations' sums over each sub-block.
    const __m128i minimum_index = _mm_set_epi16((short)0x800F, (short)0x800E, (short)0x800D, (short)0x800C,
                                                (short)0x800B, (short)0x800A, (short)0x8009, (short)0x8008);
    const __m128i sub_block_sums = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)sums), _mm_loadu_si128((const __m128i *)(sums + 8)));
    *mins = _mm_madd_epi16(_mm_shuffle_epi8(_mm256_castsi256_si128(scales), minimum_index), sub_block_sums);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int j = 0; j < 4; j++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(block + 16 + 32 * j));
        const __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        const __m256i p_lo = DOT(_mm256_setzero_si256(), lo, _mm256_loadu_si256((const __m256i *)(xq + 64 * j)));
        const __m256i p_hi = DOT(_mm256_setzero_si256(), hi, _mm256_loadu_si256((const __m256i *)(xq + 64 * j + 32)));
        pairs[j] = _mm256_madd_epi16(_mm256_packs_epi32(p_lo, p_hi), _mm256_shuffle_epi8(scales, KERNEL(spread_bytes)(2 * j, 2 * j + 1)));
    }
}

static inline __attribute__((always_inline)) __m256i KERNEL(sum_pairs)(const __m256i pairs[4]) {
    return _mm256_add_epi32(_mm256_add_epi32(pairs[0], pairs[1]), _mm256_add_epi32(pairs[2], pairs[3]));
}

/// One token's q4_K (llama.cpp's repacked gemv): per row, each block's exact integer sum times
/// d * d_x and its minimums' sum times dmin * d_x, fused into two floats. Both rows' four sums are
/// reduced together into one vector [total 0, total 1, minimums 0, minimums 1] and stepped with one
/// vfmadd by [d0, d1, dmin0, dmin1] * d_x (each lane the scalar fmaf it stands for).
static inline __attribute__((always_inline)) void KERNEL(q4_K_gemv)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                    const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m128 accumulators = _mm_setzero_ps();
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 144 * b, *b1 = w1 + 144 * b;
            for (size_t line = 0; line < 2 * 144; line += 64) __builtin_prefetch(w0 + ahead + 2 * 144 * b + line, 0, 3);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            __m256i dots0[4], dots1[4];
            __m128i mins0, mins1;
            KERNEL(q4_K_block)(b0, xq, sums, dots0, &mins0);
            KERNEL(q4_K_block)(b1, xq, sums, dots1, &mins1);
            // Per 128-bit half [row 0: 0+1, 2+3; row 1: 0+1, 2+3], then the halves added.
            const __m256i pairs = _mm256_hadd_epi32(KERNEL(sum_pairs)(dots0), KERNEL(sum_pairs)(dots1));
            const __m128i totals = _mm_add_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
            const __m128i exact = _mm_hadd_epi32(totals, _mm_hadd_epi32(mins0, mins1));
            // Each block starts with f16 d and dmin: interleaved, [d0, d1, dmin0, dmin1].
            uint32_t head0, head1;
            memcpy(&head0, b0, 4);
            memcpy(&head1, b1, 4);
            const __m128 scales = _mm_mul_ps(_mm_cvtph_ps(_mm_unpacklo_epi16(_mm_cvtsi32_si128((int)head0), _mm_cvtsi32_si128((int)head1))),
                                             _mm_set1_ps(x->k_scales[b]));
            accumulators = _mm_fmadd_ps(_mm_cvtepi32_ps(exact), scales, accumulators);
        }
        float lanes[4];
        _mm_storeu_ps(lanes, accumulators);
        y[r] = lanes[0] - lanes[2];
        if (r + 1 < rows) y[r + 1] = lanes[1] - lanes[3];
    }
}

/// A prompt row's q4_K (llama.cpp's repacked gemm): as the gemv, but one fused step per pair of
/// sub-blocks instead of per block.
static inline __attribute__((always_inline)) void KERNEL(q4_K_gemm)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                    const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r++) {
        const uint8_t *row = w + (size_t)r * row_bytes;
        float total = 0, minimum = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = row + 144 * b;
            for (size_t line = 0; line < 144; line += 64) __builtin_prefetch(block + ahead + line, 0, 3);
            __m256i dots[4];
            __m128i mins_vector;
            KERNEL(q4_K_block)(block, x->k_values + 256 * b, x->k_sums + 16 * b, dots, &mins_vector);
            int mins[4];
            _mm_storeu_si128((__m128i *)mins, mins_vector);
            const float xd = x->k_scales[b];
            const float d = KERNEL(half)(block) * xd, dmin = KERNEL(half)(block + 2) * xd;
            for (int j = 0; j < 4; j++) {
                total = fmaf((float)KERNEL(sum8i)(dots[j]), d, total);
                minimum = fmaf((float)mins[j], dmin, minimum);
            }
        }
        y[r] = total - minimum;
    }
}

/// q4_K as llama.cpp's repacked kernels sum it: per row, the scaled integer sums times d * d_x and
/// the min sums times dmin * d_x accumulate (fused) in two floats, subtracted at the end; one step
/// per block (its gemv: one token), or per pair of sub-blocks (its gemm: `x->q4_K_gemm`).
static void KERNEL(q4_K)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    if (x->q4_K_gemm) KERNEL(q4_K_gemm)(w, row_bytes, rows, blocks, x, y);
    else KERNEL(q4_K_gemv)(w, row_bytes, rows, blocks, x, y);
}

/// One q5_K block of one row in ggml's vec_dot lanes: per 32 weights, vpmaddubsw of the 5-bit q
/// with the activations and vpmaddwd by the sub-block's scale, added into eight int32 lanes (lane i:
/// weights 4i..4i+3 of every sub-block); `minimum` gets the exact sum of min times the activations'
/// sums.
static inline __attribute__((always_inline)) __m256i KERNEL(q5_K_block)(const uint8_t *block, const int8_t *xq, const int16_t *sums,
                                                                        int *minimum) {
    const __m256i scales = KERNEL(k_scales)(block + 4);
    const __m128i minimum_index = _mm_set_epi16((short)0x800F, (short)0x800E, (short)0x800D, (short)0x800C,
                                                (short)0x800B, (short)0x800A, (short)0x8009, (short)0x8008);
    const __m128i sub_block_sums = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)sums), _mm_loadu_si128((const __m128i *)(sums + 8)));
    __m128i mins = _mm_madd_epi16(_mm_shuffle_epi8(_mm256_castsi256_si128(scales), minimum_index), sub_block_sums);
    mins = _mm_add_epi32(mins, _mm_unpackhi_epi64(mins, mins));
    *minimum = _mm_cvtsi128_si32(_mm_add_epi32(mins, _mm_shuffle_epi32(mins, 1)));
    const __m256i low4 = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
    const __m256i high = _mm256_loadu_si256((const __m256i *)(block + 16));
    __m256i total = _mm256_setzero_si256();
    for (int j = 0; j < 4; j++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(block + 48 + 32 * j));
        // The fifth bit of sub-block 2j is bit 2j of each qh byte, of 2j + 1 bit 2j + 1: both as bit 4.
        const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, low4), _mm256_and_si256(KERNEL(shift_to_bit4)(high, 4 - 2 * j), bit4));
        const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4),
                                           _mm256_and_si256(KERNEL(shift_to_bit4)(high, 3 - 2 * j), bit4));
        // vpmaddubsw cannot saturate: 2 * 31 * 127 fits in int16.
        const __m256i p_lo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(xq + 64 * j)));
        const __m256i p_hi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(xq + 64 * j + 32)));
        total = SCALED_ADD(total, _mm256_shuffle_epi8(scales, KERNEL(spread_bytes)(2 * j, 2 * j)), p_lo);
        total = SCALED_ADD(total, _mm256_shuffle_epi8(scales, KERNEL(spread_bytes)(2 * j + 1, 2 * j + 1)), p_hi);
    }
    return total;
}

/// q5_K as llama.cpp's vec_dot sums it (it has no repacked q5_K on x86, so a prompt row sums the
/// same way): each block's eight lanes times d * d_x fused into eight float lanes, the minimums as
/// one float, each block's exact sum times -d_x * dmin fused into it; the lanes' sum plus that float.
static void KERNEL(q5_K)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float m0 = 0, m1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 176 * b, *b1 = w1 + 176 * b;
            for (size_t line = 0; line < 2 * 176; line += 64) __builtin_prefetch(w0 + ahead + 2 * 176 * b + line, 0, 3);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            int min0, min1;
            const __m256i p0 = KERNEL(q5_K_block)(b0, xq, sums, &min0), p1 = KERNEL(q5_K_block)(b1, xq, sums, &min1);
            const float xd = x->k_scales[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(KERNEL(half)(b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(KERNEL(half)(b1) * xd), _mm256_cvtepi32_ps(p1), a1);
            m0 = fmaf(-xd * KERNEL(half)(b0 + 2), (float)min0, m0);
            m1 = fmaf(-xd * KERNEL(half)(b1 + 2), (float)min1, m1);
        }
        y[r] = KERNEL(sum8)(a0) + m0;
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1) + m1;
    }
}

/// vpshufb indexes that fill the lower 128-bit half with int16 lane `lower` and the upper half with
/// int16 lane `upper`.
static inline __attribute__((always_inline)) __m256i KERNEL(spread_words)(int lower, int upper) {
    const short a = (short)((2 * lower + 1) << 8 | 2 * lower), b = (short)((2 * upper + 1) << 8 | 2 * upper);
    return _mm256_set_m128i(_mm_set1_epi16(b), _mm_set1_epi16(a));
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
        // Scales 8h..8h+7 as int16 in both 128-bit halves; vpshufb gives run 2k its lower half's
        // lanes and run 2k + 1 its upper half's.
        int64_t eight;
        memcpy(&eight, scales + 8 * h, 8);
        const __m256i half_scales = _mm256_cvtepi8_epi16(_mm_set1_epi64x(eight));
        for (int k = 0; k < 4; k++) {
            const __m256i products = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256((const __m256i *)(xq + 128 * h + 32 * k)));
            total = SCALED_ADD(total, _mm256_shuffle_epi8(half_scales, KERNEL(spread_words)(2 * k, 2 * k + 1)), products);
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
            const float d0 = KERNEL(half)(b0 + 208), d1 = KERNEL(half)(b1 + 208);
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

/// hitch_quantize_q8 in vectors, to the bit: the same largest magnitude (vmaxps keeps its second
/// operand, so a NaN never wins), the same products rounded to nearest even, a value that is NaN or
/// beyond 127 (an infinity in the block) set to 0, the scale and the scaled sum rounded to f16 as
/// F16C rounds (to nearest even, subnormals kept, as the portable float_to_half); each lane's
/// offset from the exact sums of its four values.
static void KERNEL(quantize_q8)(const float *x, long count, const hitch_q8_activations *out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), top = _mm256_set1_ps(127.f);
    for (long b = 0; b < count / 32; b++) {
        const float *xb = x + 32 * b;
        __m256 largest = _mm256_setzero_ps();
        for (int j = 0; j < 32; j += 8) largest = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + j)), largest);
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
        const float d = amax / 127.f;
        const __m256 inverse = _mm256_set1_ps(amax != 0.f ? 127.f / amax : 0.f);
        __m256i ints[4];
        for (int h = 0; h < 4; h++) {
            const __m256 v = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 8 * h), inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            // |v| <= 127 is false for NaN: those (and anything beyond 127) become 0.
            ints[h] = _mm256_cvtps_epi32(_mm256_and_ps(v, _mm256_cmp_ps(_mm256_andnot_ps(sign, v), top, _CMP_LE_OQ)));
        }
        // vpackssdw and vpacksswb interleave per 128-bit half; vpermd puts the 32 bytes back in order.
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(_mm256_packs_epi32(ints[0], ints[1]), _mm256_packs_epi32(ints[2], ints[3])),
                                                          _mm256_set_epi32(7, 3, 6, 2, 5, 1, 4, 0));
        _mm256_storeu_si256((__m256i *)(out->values + 32 * b), bytes);
        // Each lane's four values summed exactly (|q| <= 127), then -8 times that.
        const __m256i fours = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), bytes), _mm256_set1_epi16(1));
        _mm256_storeu_si256((__m256i *)(out->offsets + 8 * b), _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(fours, 3)));
        const int sum = KERNEL(sum8i)(fours);
        out->block_offsets[b] = -8 * sum;
        out->scales[b] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(d), _MM_FROUND_TO_NEAREST_INT)));
        out->sums[b] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(d * (float)sum), _MM_FROUND_TO_NEAREST_INT)));
    }
}

/// hitch_quantize_q8_K in vectors, to the bit: the same largest magnitude (a NaN never wins, as in
/// the scalar comparison: vmaxps keeps its second operand), the first value of that magnitude, the
/// same products rounded to nearest even, NaN to 0, clamped to +-127; each run's sum exact.
static void KERNEL(quantize_q8_K)(const float *x, long count, const hitch_q8_activations *out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), top = _mm256_set1_ps(127.f), bottom = _mm256_set1_ps(-127.f);
    for (long b = 0; b < count / 256; b++) {
        const float *xb = x + 256 * b;
        int8_t *q = out->k_values + 256 * b;
        int16_t *sums = out->k_sums + 16 * b;
        __m256 largest = _mm256_setzero_ps();
        for (int j = 0; j < 256; j += 8) largest = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + j)), largest);
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
        if (amax == 0 || amax == INFINITY) {   // all zero (or garbage): contributes nothing
            memset(q, 0, 256);
            memset(sums, 0, 16 * sizeof(int16_t));
            out->k_scales[b] = 0;
            continue;
        }
        float extreme = amax;
        for (int j = 0; j < 256; j += 8) {
            const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + j)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hits) { extreme = xb[j + __builtin_ctz((unsigned)hits)]; break; }
        }
        const float inverse = -127.f / extreme;
        const __m256 scale = _mm256_set1_ps(inverse);
        for (int run = 0; run < 16; run++) {
            __m256i ints[2];
            for (int h = 0; h < 2; h++) {
                __m256 v = _mm256_round_ps(_mm256_mul_ps(scale, _mm256_loadu_ps(xb + 16 * run + 8 * h)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));   // NaN to 0
                ints[h] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, bottom), top));
            }
            // vpackssdw interleaves per 128-bit half; vpermq puts the 16 words back in order.
            const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(ints[0], ints[1]), 0xD8);
            _mm_storeu_si128((__m128i *)(q + 16 * run), _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1)));
            sums[run] = (int16_t)KERNEL(sum8i)(_mm256_add_epi32(ints[0], ints[1]));
        }
        out->k_scales[b] = 1 / inverse;
    }
}
