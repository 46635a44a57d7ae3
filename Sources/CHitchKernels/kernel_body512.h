// The 512-bit kernels of the AVX-512 versions, included by kernels.c after kernel_body.h (whose
// 256-bit kernels they fall back to for a last odd row) with KERNEL(name) naming the version and
// DOT512(acc, u, s) adding to the sixteen int32 lanes of `acc` the sums of four products of unsigned
// bytes `u` with signed bytes `s` (vpdpbusd, or vpmaddubsw + vpmaddwd). Each keeps two rows in one
// register, row 0 in the lower 256 bits and row 1 in the upper, so every lane computes what the
// 256-bit kernel's lane computes, in the same order: the results are the same floats.
// (No include guard: this file is meant to be included several times.)

/// Two rows' 32 weights of a q4/q5 block in one register, [row 0 | row 1]: each row's 16 bytes of
/// nibbles broadcast to a half, the upper quarter of each half shifted by 4 (its high nibbles),
/// masked; for q5_* the fifth bits added from a 64-bit mask (row 0's 32 bits, then row 1's).
static inline __attribute__((always_inline)) __m512i KERNEL(small_weights_512)(const uint8_t *b0, const uint8_t *b1, size_t bits,
                                                                               size_t nibbles, int five) {
    const __m512i packed = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b0 + nibbles)))),
                                              _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b1 + nibbles))), 1);
    const __m512i q = _mm512_and_si512(_mm512_srlv_epi64(packed, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)), _mm512_set1_epi8(0x0F));
    if (!five) return q;
    uint32_t h0, h1;
    memcpy(&h0, b0 + bits, 4);
    memcpy(&h1, b1 + bits, 4);
    return _mm512_mask_add_epi8(q, _cvtu64_mask64((uint64_t)h0 | (uint64_t)h1 << 32), q, _mm512_set1_epi8(16));
}

/// q4_0, q4_1, q5_0, q5_1 (as kernel_body.h's q4or5), four rows at a time in two registers of two
/// rows each (the activations broadcast to both halves); the last rows by kernel_body.h's q4or5.
static inline __attribute__((always_inline)) void KERNEL(q4or5_512)(const uint8_t *w, size_t row_bytes, long rows, long blocks,
                                                                    const hitch_q8_activations *x, float *y, int has_minimum, int five) {
    const size_t block_bytes = 18 + 2 * has_minimum + 4 * five, bits = 2 + 2 * has_minimum, nibbles = bits + 4 * five;
    const size_t group = 4 * row_bytes, ahead = group * ((4096 + group - 1) / group);
    // [d0 x 8 | d1 x 8] and [d2 x 8 | d3 x 8] from `four_heads`.
    const int step = has_minimum ? 2 : 1;
    const __m512i spread01 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi32(step), 1);
    const __m512i spread23 = _mm512_inserti64x4(_mm512_set1_epi32(2 * step), _mm256_set1_epi32(3 * step), 1);
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
                : _mm512_slli_epi32(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b))), five);
            const __m512i p01 = DOT512(offset, KERNEL(small_weights_512)(b0, b1, bits, nibbles, five), xv);
            const __m512i p23 = DOT512(offset, KERNEL(small_weights_512)(b2, b3, bits, nibbles, five), xv);
            const __m256 heads = KERNEL(four_heads)(b0, b1, b2, b3, has_minimum);
            const __m512 scales = _mm512_castps256_ps512(_mm256_mul_ps(heads, _mm256_set1_ps(x->scales[b])));
            a01 = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread01, scales), _mm512_cvtepi32_ps(p01), a01);
            a23 = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread23, scales), _mm512_cvtepi32_ps(p23), a23);
            if (has_minimum) minimums = _mm256_fmadd_ps(heads, _mm256_set1_ps(x->sums[b]), minimums);
        }
        float m[8];
        _mm256_storeu_ps(m, minimums);
        y[r] = KERNEL(sum8)(_mm512_castps512_ps256(a01)) + (has_minimum ? m[1] : 0.0f);
        y[r + 1] = KERNEL(sum8)(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a01), 1))) + (has_minimum ? m[3] : 0.0f);
        y[r + 2] = KERNEL(sum8)(_mm512_castps512_ps256(a23)) + (has_minimum ? m[5] : 0.0f);
        y[r + 3] = KERNEL(sum8)(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a23), 1))) + (has_minimum ? m[7] : 0.0f);
    }
    if (r < rows) KERNEL(q4or5)(w + (size_t)r * row_bytes, row_bytes, rows - r, blocks, x, y + r, has_minimum, five);
}

#define Q4OR5_512(name, has_minimum, five)                                                                                \
    static void KERNEL(name##_512)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) { \
        KERNEL(q4or5_512)(w, row_bytes, rows, blocks, x, y, has_minimum, five);                                           \
    }
Q4OR5_512(q4_0, 0, 0)
Q4OR5_512(q4_1, 1, 0)
Q4OR5_512(q5_0, 0, 1)
Q4OR5_512(q5_1, 1, 1)
#undef Q4OR5_512
