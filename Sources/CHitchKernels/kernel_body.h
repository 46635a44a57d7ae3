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

/// Prefetch whole row pairs at least 4 KB ahead: short rows (q4_1 at 576 columns is 360 bytes)
/// would otherwise leave too little in flight to cover the memory latency.
static inline __attribute__((always_inline)) size_t KERNEL(ahead)(size_t row_bytes) {
    const size_t pair = 2 * row_bytes;
    return pair * ((4096 + pair - 1) / pair);
}

// The three kernels share one shape: two rows at a time (each activation load feeds both), per
// block the integer lanes, converted to float and multiplied-added by the product of the two scales
// (as ggml's vec_dot), the next rows prefetched while these are read.

static void KERNEL(q4_0)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 18 * b, *b1 = w1 + 18 * b;
            __builtin_prefetch(w0 + ahead + 2 * 18 * b, 0, 3);   // two blocks per block: the whole pair by the end
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->values + 32 * b));
            // The offset lanes (-8 * sums of the activations) make the unsigned products (q - 8) * x.
            const __m256i offset = _mm256_loadu_si256((const __m256i *)(x->offsets + 8 * b));
            const __m256i p0 = DOT(offset, KERNEL(nibbles)(b0 + 2), xv);
            const __m256i p1 = DOT(offset, KERNEL(nibbles)(b1 + 2), xv);
            const float xd = x->scales[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
        }
        y[r] = KERNEL(sum8)(a0);
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1);
    }
}

static void KERNEL(q4_1)(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    const size_t ahead = KERNEL(ahead)(row_bytes);
    for (long r = 0; r < rows; r += 2) {
        const uint8_t *w0 = w + (size_t)r * row_bytes;
        const uint8_t *w1 = r + 1 < rows ? w0 + row_bytes : w0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float m0 = 0, m1 = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *b0 = w0 + 20 * b, *b1 = w1 + 20 * b;
            __builtin_prefetch(w0 + ahead + 2 * 20 * b, 0, 3);   // two blocks per block: the whole pair by the end
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(x->values + 32 * b));
            const __m256i p0 = DOT(_mm256_setzero_si256(), KERNEL(nibbles)(b0 + 4), xv);
            const __m256i p1 = DOT(_mm256_setzero_si256(), KERNEL(nibbles)(b1 + 4), xv);
            const float xd = x->scales[b], xs = x->sums[b];
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
            // w = d * q + m, so the minimum adds m * (sum of x) = m * s.
            m0 += _cvtsh_ss(*(const uint16_t *)(b0 + 2)) * xs;
            m1 += _cvtsh_ss(*(const uint16_t *)(b1 + 2)) * xs;
        }
        y[r] = KERNEL(sum8)(a0) + m0;
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1) + m1;
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
            a0 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b0) * xd), _mm256_cvtepi32_ps(p0), a0);
            a1 = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(*(const uint16_t *)b1) * xd), _mm256_cvtepi32_ps(p1), a1);
        }
        y[r] = KERNEL(sum8)(a0);
        if (r + 1 < rows) y[r + 1] = KERNEL(sum8)(a1);
    }
}
