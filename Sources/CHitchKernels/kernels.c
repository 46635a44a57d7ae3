// Dispatch and the portable versions of the kernels in include/hitch_kernels.h; the x86 versions are
// kernel_body.h compiled three times under different target attributes.

#include "hitch_kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/// IEEE half to float (the portable path; x86 versions use vcvtph2ps).
static float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    uint32_t bits;
    if (exponent == 0) {
        if (mantissa == 0) { bits = sign; }
        else {   // subnormal: normalize
            int e = -1;
            uint32_t m = mantissa;
            do { e++; m <<= 1; } while ((m & 0x400) == 0);
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((m & 0x3FF) << 13);
        }
    } else if (exponent == 31) {
        bits = sign | 0x7F800000 | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/// Float to half, round to nearest even (for the f16-rounded scales; both paths use this one).
static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    uint32_t abs = x & 0x7FFFFFFF;
    if (abs >= 0x7F800000) return (uint16_t)(sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 : 0));   // inf / nan
    if (abs >= 0x477FF000) return (uint16_t)(sign | 0x7C00);                                      // overflow
    if (abs < 0x38800000) {   // subnormal half (or zero)
        if (abs < 0x33000000) return (uint16_t)sign;
        const uint32_t e = abs >> 23, m = (abs & 0x7FFFFF) | 0x800000, shift = 126 - e;
        uint32_t h = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((abs >> 13) - (112u << 10));
    const uint32_t rest = abs & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float round_to_half(float f) { return half_to_float(float_to_half(f)); }

// MARK: Quantization (portable; both have x86 versions too, in kernel_body.h: they run before every
// product on the dispatching thread while the others wait)

static void portable_quantize_q8(const float *x, long count, const hitch_q8_activations *out) {
    for (long b = 0; b < count / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0;
        for (int j = 0; j < 32; j++) { const float a = fabsf(xb[j]); amax = a > amax ? a : amax; }
        const float d = amax / 127.f;
        const float inverse = amax != 0.f ? 127.f / amax : 0.f;
        int8_t *q = out->values + 32 * b;
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            const float v = nearbyintf(xb[j] * inverse);   // round to nearest even, as ggml's AVX path
            // NaN or infinity (a model whose weights hold them) becomes 0: garbage in, not undefined behaviour.
            const int i = v == v && fabsf(v) <= 127.f ? (int)v : 0;
            q[j] = (int8_t)i;
            sum += i;
        }
        out->scales[b] = round_to_half(d);
        out->sums[b] = round_to_half(d * (float)sum);
        for (int lane = 0; lane < 8; lane++) {
            out->offsets[8 * b + lane] = -8 * (q[4 * lane] + q[4 * lane + 1] + q[4 * lane + 2] + q[4 * lane + 3]);
        }
        out->block_offsets[b] = -8 * sum;
    }
}

static void portable_quantize_q8_K(const float *x, long count, const hitch_q8_activations *out) {
    for (long b = 0; b < count / 256; b++) {
        const float *xb = x + 256 * b;
        int8_t *q = out->k_values + 256 * b;
        int16_t *sums = out->k_sums + 16 * b;
        float amax = 0, extreme = 0;
        for (int j = 0; j < 256; j++) {
            const float a = fabsf(xb[j]);
            if (a > amax) { amax = a; extreme = xb[j]; }
        }
        if (amax == 0 || amax != amax || amax == INFINITY) {   // all zero (or garbage): contributes nothing
            memset(q, 0, 256);
            memset(sums, 0, 16 * sizeof(int16_t));
            out->k_scales[b] = 0;
            continue;
        }
        // The extreme value maps to -127 exactly, so the scale carries its sign (as ggml).
        const float inverse = -127.f / extreme;
        for (int run = 0; run < 16; run++) {
            int sum = 0;
            for (int j = 16 * run; j < 16 * run + 16; j++) {
                const float v = nearbyintf(inverse * xb[j]);
                const int i = v == v ? (v > 127.f ? 127 : v < -127.f ? -127 : (int)v) : 0;
                q[j] = (int8_t)i;
                sum += i;
            }
            sums[run] = (int16_t)sum;
        }
        out->k_scales[b] = 1 / inverse;
    }
}

// MARK: SwiGLU and softmax as llama.cpp's AVX-512 build computes them

/// ggml_v_expf of ggml's AVX-512 build, one lane: exp(x) = 2^n * p(b) with n = round(x / ln 2) and
/// b = x - n ln 2 (in two parts), p a degree-5 polynomial; |n| > 192 gives infinity or 0. Each
/// operation as the vector code does it (fmaf for its fused multiply-adds), so the bits are the same.
/// Included twice: with hardware FMA (fmaf is one instruction) and portable (fmaf is libm's).
/// j * 2^n rounded once, as vscalefps: a multiplication by the power of two where it is a normal
/// float (exact but for the one rounding of a subnormal result), libm's ldexpf beyond.
static inline float scale_by_power_of_two(float j, int n) {
    if (n < -126 || n > 127) return ldexpf(j, n);
    const uint32_t bits = (uint32_t)(n + 127) << 23;
    float power;
    memcpy(&power, &bits, 4);
    return j * power;
}

#define EXP_GGML_BODY                                                                                     \
    {                                                                                                     \
        const float r = 0x1.8p23f;                                                                        \
        const float z = fmaf(x, 0x1.715476p+0f, r);                                                       \
        const float n = z - r;                                                                            \
        const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));                             \
        const float u = b * b;                                                                            \
        const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), \
                             u, fmaf(0x1.ffffecp-1f, b, 1.0f));                                           \
        return fabsf(n) > 192 ? (n <= 0 ? 0.0f : INFINITY) : scale_by_power_of_two(j, (int)n);            \
    }

#define SWIGLU_BODY(exp_ggml)                                                                             \
    for (long i = 0; i < count; i++) {                                                                    \
        const float d = 1.0f + exp_ggml(0.0f - gate[i]);                                                  \
        const float silu = gate[i] / d;                                                                   \
        out[i] = silu * up[i];                                                                            \
    }

/// ggml_vec_soft_max_f32: runs of 16 reduced as _mm512_reduce_add_ps (lanes 8 apart, then 4, 2, 1).
#define SOFTMAX_BODY(exp_ggml)                                                                            \
    double sum = 0;                                                                                       \
    long i = 0;                                                                                           \
    for (; i + 15 < count; i += 16) {                                                                     \
        float v[16], h8[8], h4[4];                                                                        \
        for (int k = 0; k < 16; k++) { v[k] = exp_ggml(x[i + k] - max); y[i + k] = v[k]; }               \
        for (int k = 0; k < 8; k++) h8[k] = v[k] + v[k + 8];                                              \
        for (int k = 0; k < 4; k++) h4[k] = h8[k] + h8[k + 4];                                            \
        sum += (double)((h4[0] + h4[2]) + (h4[1] + h4[3]));                                               \
    }                                                                                                     \
    for (; i < count; i++) { const float v = expf(x[i] - max); sum += (double)v; y[i] = v; }              \
    return sum;

static inline float portable_exp_ggml(float x) EXP_GGML_BODY
static void portable_swiglu(const float *gate, const float *up, long count, float *out) { SWIGLU_BODY(portable_exp_ggml) }
static double portable_softmax(const float *x, long count, float max, float *y) { SOFTMAX_BODY(portable_exp_ggml) }

#if defined(__x86_64__) && defined(__clang__)
__attribute__((target("fma"))) static inline float fma_exp_ggml(float x) EXP_GGML_BODY
__attribute__((target("fma"))) static void fma_swiglu(const float *gate, const float *up, long count, float *out) { SWIGLU_BODY(fma_exp_ggml) }
__attribute__((target("fma"))) static double fma_softmax(const float *x, long count, float max, float *y) { SOFTMAX_BODY(fma_exp_ggml) }
#endif

static void (*chosen_swiglu)(const float *, const float *, long, float *) = portable_swiglu;
static double (*chosen_softmax)(const float *, long, float, float *) = portable_softmax;

void hitch_swiglu_ggml(const float *gate, const float *up, long count, float *out) { chosen_swiglu(gate, up, count, out); }
double hitch_softmax_ggml(const float *x, long count, float max, float *y) { return chosen_softmax(x, count, max, y); }

// MARK: Portable kernels

/// The 4- or 5-bit weights of a q4_*/q5_* block: the nibble, plus bit i of q5's 32-bit `qh` as 16.
static inline int small_weight(const uint8_t *qs, uint32_t qh, int i) {
    const int nibble = i < 16 ? qs[i] & 15 : qs[i - 16] >> 4;
    return nibble | (int)((qh >> i) & 1) << 4;
}

/// The eight lanes' sum as kernel_body.h's sum8 adds them: halves, then pairs two apart, then the last two.
static float sum8(const float lanes[8]) {
    float h4[4];
    for (int l = 0; l < 4; l++) h4[l] = lanes[l] + lanes[l + 4];
    return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

/// q4_0, q4_1, q5_0, q5_1: q*_0 weights are d (q - 8) (d (q - 16)), q*_1 weights d q + m. Summed in
/// the float order of kernel_body.h's q4or5: per block, eight exact integer lanes (lane l: weights
/// 4l..4l+3) times d * d_x fused into eight float lanes; q*_1's minimums m * s fused into one float,
/// added after the lanes' sum.
static void portable_q4or5(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y,
                           int has_minimum, int five) {
    const size_t block_bytes = 18 + 2 * has_minimum + 4 * five, bits = 2 + 2 * has_minimum, nibbles = bits + 4 * five;
    const int center = has_minimum ? 0 : five ? 16 : 8;
    for (long r = 0; r < rows; r++) {
        float lanes[8] = {0}, minimum = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = w + (size_t)r * row_bytes + block_bytes * b;
            uint32_t qh = 0;
            if (five) memcpy(&qh, block + bits, 4);
            const int8_t *xq = x->values + 32 * b;
            const float d = half_to_float((uint16_t)(block[0] | block[1] << 8)) * x->scales[b];
            for (int l = 0; l < 8; l++) {
                int sum = 0;
                for (int i = 4 * l; i < 4 * l + 4; i++) sum += (small_weight(block + nibbles, qh, i) - center) * xq[i];
                lanes[l] = fmaf(d, (float)sum, lanes[l]);
            }
            if (has_minimum) minimum = fmaf(half_to_float((uint16_t)(block[2] | block[3] << 8)), x->sums[b], minimum);
        }
        y[r] = sum8(lanes) + minimum;
    }
}

#define PORTABLE_Q4OR5(name, has_minimum, five)                                                                        \
    static void portable_##name(const uint8_t *w, size_t rb, long rows, long blocks, const hitch_q8_activations *x, float *y) { \
        portable_q4or5(w, rb, rows, blocks, x, y, has_minimum, five);                                                 \
    }
PORTABLE_Q4OR5(q4_0, 0, 0)
PORTABLE_Q4OR5(q4_1, 1, 0)
PORTABLE_Q4OR5(q5_0, 0, 1)
PORTABLE_Q4OR5(q5_1, 1, 1)
#undef PORTABLE_Q4OR5

// MARK: q4_0 interleaved eight rows at a time (the layout: include/hitch_kernels.h)

/// Where block `b` of an interleaved group starts: its eight f16 scales, then its 128 bytes of nibbles.
static inline const uint8_t *rows8_heads(const uint8_t *group, long b) { return group + 144 * b; }
static inline const uint8_t *rows8_nibbles(const uint8_t *group, long b) { return group + 144 * b + 16; }

int hitch_interleave_q4_0_rows8(void *weights, size_t row_bytes, long rows, long blocks) {
    uint8_t *scratch = malloc(8 * row_bytes);
    if (!scratch) return 0;
    for (long g = 0; g < rows / 8; g++) {
        uint8_t *group = (uint8_t *)weights + (size_t)g * 8 * row_bytes;
        memcpy(scratch, group, 8 * row_bytes);
        for (long b = 0; b < blocks; b++) {
            for (int k = 0; k < 8; k++) {
                const uint8_t *block = scratch + (size_t)k * row_bytes + 18 * b;
                memcpy((uint8_t *)rows8_heads(group, b) + 2 * k, block, 2);
                for (int c = 0; c < 4; c++) memcpy((uint8_t *)rows8_nibbles(group, b) + 32 * c + 4 * k, block + 2 + 4 * c, 4);
            }
        }
    }
    free(scratch);
    return 1;
}

void hitch_q4_0_rows8_row(const void *interleaved, size_t row_bytes, long row, long blocks, void *out) {
    const uint8_t *group = (const uint8_t *)interleaved + (size_t)(row / 8) * 8 * row_bytes;
    const int k = (int)(row % 8);
    for (long b = 0; b < blocks; b++) {
        uint8_t *block = (uint8_t *)out + 18 * b;
        memcpy(block, rows8_heads(group, b) + 2 * k, 2);
        for (int c = 0; c < 4; c++) memcpy(block + 2 + 4 * c, rows8_nibbles(group, b) + 32 * c + 4 * k, 4);
    }
}

/// Interleaved q4_0 in the float order of llama.cpp's repacked q4_0 (kernel_body.h's q4_0_rows8):
/// per row, each block's exact integer sum times d * d_x fused into one float.
static void portable_q4_0_rows8(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    for (long g = 0; g < rows / 8; g++) {
        const uint8_t *group = w + (size_t)g * 8 * row_bytes;
        for (int k = 0; k < 8; k++) {
            float total = 0;
            for (long b = 0; b < blocks; b++) {
                const uint8_t *nibbles = rows8_nibbles(group, b), *head = rows8_heads(group, b) + 2 * k;
                const int8_t *xq = x->values + 32 * b;
                int sum = 0;
                for (int c = 0; c < 4; c++) {
                    for (int j = 0; j < 4; j++) {
                        const uint8_t byte = nibbles[32 * c + 4 * k + j];
                        sum += ((byte & 15) - 8) * xq[4 * c + j] + ((byte >> 4) - 8) * xq[16 + 4 * c + j];
                    }
                }
                total = fmaf((float)sum, half_to_float((uint16_t)(head[0] | head[1] << 8)) * x->scales[b], total);
            }
            y[8 * g + k] = total;
        }
    }
}

/// q8_0 in the float order of kernel_body.h's q8_0: as q4_0, with the int8 weights as they are.
static void portable_q8_0(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    for (long r = 0; r < rows; r++) {
        float lanes[8] = {0};
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = w + (size_t)r * row_bytes + 34 * b;
            const int8_t *q = (const int8_t *)(block + 2), *xq = x->values + 32 * b;
            const float d = half_to_float((uint16_t)(block[0] | block[1] << 8)) * x->scales[b];
            for (int l = 0; l < 8; l++) {
                int sum = 0;
                for (int i = 4 * l; i < 4 * l + 4; i++) sum += q[i] * xq[i];
                lanes[l] = fmaf(d, (float)sum, lanes[l]);
            }
        }
        y[r] = sum8(lanes);
    }
}

/// The eight 6-bit scales and eight 6-bit minimums packed in a q4_K/q5_K block's 12 bytes: bytes
/// 0-3 hold scales 0-3 (low 6 bits), bytes 4-7 minimums 0-3; bytes 8-11 hold the low 4 bits of
/// scales 4-7 (low nibble) and minimums 4-7 (high nibble), whose top 2 bits are the spare top bits
/// of bytes 0-3 and 4-7. Done on 32-bit words: four at a time.
static inline void unpack_k_scales(const uint8_t *packed, uint8_t scales[8], uint8_t minimums[8]) {
    uint32_t a, b, c;
    memcpy(&a, packed, 4); memcpy(&b, packed + 4, 4); memcpy(&c, packed + 8, 4);
    const uint32_t low6 = 0x3F3F3F3Fu, low4 = 0x0F0F0F0Fu, low2 = 0x03030303u;
    const uint32_t s_low = a & low6, m_low = b & low6;
    const uint32_t s_high = (c & low4) | ((a >> 6) & low2) << 4, m_high = ((c >> 4) & low4) | ((b >> 6) & low2) << 4;
    memcpy(scales, &s_low, 4); memcpy(scales + 4, &s_high, 4);
    memcpy(minimums, &m_low, 4); memcpy(minimums + 4, &m_high, 4);
}

/// q4_K in the float order of llama.cpp's repacked kernels (kernel_body.h's q4_K): per pair of
/// sub-blocks the exact integer sums, one fused step per block (or per pair: `x->q4_K_gemm`).
static void portable_q4_K(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    for (long r = 0; r < rows; r++) {
        float total = 0, minimum = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = w + (size_t)r * row_bytes + 144 * b, *qs = block + 16;
            uint8_t scales[8], minimums[8];
            unpack_k_scales(block + 4, scales, minimums);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            const float xd = x->k_scales[b];
            const float d = half_to_float((uint16_t)(block[0] | block[1] << 8)) * xd;
            const float dmin = half_to_float((uint16_t)(block[2] | block[3] << 8)) * xd;
            int dot_sum = 0, min_sum = 0;
            for (int j = 0; j < 4; j++) {
                int dot = 0, minimum_j = 0;
                for (int half = 0; half < 2; half++) {
                    const int s = 2 * j + half;
                    int sub = 0;
                    for (int i = 0; i < 32; i++) sub += (half ? qs[32 * j + i] >> 4 : qs[32 * j + i] & 15) * xq[32 * s + i];
                    dot += scales[s] * sub;
                    minimum_j += minimums[s] * (sums[2 * s] + sums[2 * s + 1]);
                }
                if (x->q4_K_gemm) {
                    total = fmaf((float)dot, d, total);
                    minimum = fmaf((float)minimum_j, dmin, minimum);
                }
                dot_sum += dot;
                min_sum += minimum_j;
            }
            if (!x->q4_K_gemm) {
                total = fmaf((float)dot_sum, d, total);
                minimum = fmaf((float)min_sum, dmin, minimum);
            }
        }
        y[r] = total - minimum;
    }
}
/// q5_K (176 bytes: f16 d, f16 dmin, 12 bytes of scales as q4_K's, 32 of fifth bits, 128 of
/// nibbles). Weight 64j + i (i < 32) is the low nibble of byte 32j + i, weight 64j + 32 + i its high
/// nibble; the fifth bit of weight 32s + i is bit s of qh[i]. Sub-block s is d * scale_s * q -
/// dmin * min_s. Summed in the float order of kernel_body.h's q5_K: eight lanes (weights 4l..4l+3
/// of every sub-block) per block fused by d * d_x, the minimums fused by -d_x * dmin into one float.
static void portable_q5_K(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    for (long r = 0; r < rows; r++) {
        float lanes[8] = {0}, minimum = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = w + (size_t)r * row_bytes + 176 * b;
            const uint8_t *qh = block + 16, *qs = block + 48;
            uint8_t scales[8], minimums[8];
            unpack_k_scales(block + 4, scales, minimums);
            const int8_t *xq = x->k_values + 256 * b;
            const int16_t *sums = x->k_sums + 16 * b;
            int lane_sums[8] = {0}, min_sum = 0;
            for (int s = 0; s < 8; s++) {
                for (int i = 0; i < 32; i++) {
                    const uint8_t byte = qs[32 * (s / 2) + i];
                    const int q = (s % 2 ? byte >> 4 : byte & 15) | ((qh[i] >> s) & 1) << 4;
                    lane_sums[i / 4] += scales[s] * q * xq[32 * s + i];
                }
                min_sum += minimums[s] * (sums[2 * s] + sums[2 * s + 1]);
            }
            const float xd = x->k_scales[b];
            const float d = half_to_float((uint16_t)(block[0] | block[1] << 8)) * xd;
            for (int l = 0; l < 8; l++) lanes[l] = fmaf(d, (float)lane_sums[l], lanes[l]);
            minimum = fmaf(-xd * half_to_float((uint16_t)(block[2] | block[3] << 8)), (float)min_sum, minimum);
        }
        y[r] = sum8(lanes) + minimum;
    }
}

/// q6_K (210 bytes: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales, f16 d). In
/// each half h of 128 weights, weight 32k + i (k < 4, i < 32) takes its low 4 bits from byte
/// 64h + 32(k % 2) + i of the nibbles (low nibble for k < 2, high for k >= 2) and its top 2 bits from
/// bits 2k..2k+1 of byte 32h + i of the pairs; q - 32 is scaled by int8 scale 8h + 2k + i / 16.
/// Summed in the float order of kernel_body.h's q6_K: eight lanes (weights 4l..4l+3 of every 32,
/// the -32 offset spread as that kernel spreads it) per block, or the block's whole sum
/// (`x->q6_K_tiled`).
static void portable_q6_K(const uint8_t *w, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y) {
    for (long r = 0; r < rows; r++) {
        float lanes[8] = {0}, tiled = 0;
        for (long b = 0; b < blocks; b++) {
            const uint8_t *block = w + (size_t)r * row_bytes + 210 * b;
            const int8_t *scales = (const int8_t *)(block + 192);
            const int8_t *xq = x->k_values + 256 * b;
            int lane_sums[8] = {0};
            for (int h = 0; h < 2; h++) {
                const uint8_t *ql = block + 64 * h, *qh = block + 128 + 32 * h;
                for (int k = 0; k < 4; k++) {
                    for (int i = 0; i < 32; i++) {
                        const uint8_t byte = ql[32 * (k % 2) + i];
                        const int q = (k < 2 ? byte & 15 : byte >> 4) | ((qh[i] >> (2 * k)) & 3) << 4;
                        lane_sums[i / 4] += scales[8 * h + 2 * k + i / 16] * q * xq[128 * h + 32 * k + i];
                    }
                }
            }
            // The -32 of every q, per lane as the x86 kernel spreads it: lane l takes scale runs 2l and 2l + 1.
            const int16_t *sums = x->k_sums + 16 * b;
            for (int l = 0; l < 8; l++) lane_sums[l] -= 32 * (sums[2 * l] * scales[2 * l] + sums[2 * l + 1] * scales[2 * l + 1]);
            const float d = half_to_float((uint16_t)(block[208] | block[209] << 8)), xd = x->k_scales[b];
            if (x->q6_K_tiled) {
                int sum = 0;
                for (int l = 0; l < 8; l++) sum += lane_sums[l];
                tiled = fmaf((float)sum * d, xd, tiled);
            } else {
                for (int l = 0; l < 8; l++) lanes[l] = fmaf(d * xd, (float)lane_sums[l], lanes[l]);
            }
        }
        y[r] = x->q6_K_tiled ? tiled : sum8(lanes);
    }
}

typedef void (*matvec_fn)(const uint8_t *, size_t, long, long, const hitch_q8_activations *, float *);

/// One instruction set's kernels, one per ggml type, and its q8_K activation quantizer.
typedef struct { matvec_fn q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K, q4_0_rows8; hitch_quantize_fn quantize_q8, quantize_q8_K; } kernel_set;

static const kernel_set portable_kernels = {portable_q4_0, portable_q4_1, portable_q5_0, portable_q5_1, portable_q8_0,
                                            portable_q4_K, portable_q5_K, portable_q6_K, portable_q4_0_rows8, portable_quantize_q8,
                                            portable_quantize_q8_K};
static kernel_set chosen = portable_kernels;
static const char *chosen_isa = "portable";

// MARK: x86 versions

#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>

#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"))), apply_to = function)
#define KERNEL(name) avx512vnni_##name
#define DOT(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))
#define SCALED_ADD(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#define DOT512(acc, u, s) _mm512_dpbusd_epi32((acc), (u), (s))
#define KERNEL_MASKS
#define KERNEL_EXACT_DOT
#include "kernel_body.h"
#undef KERNEL_MASKS
#undef KERNEL_EXACT_DOT
#undef KERNEL
#undef DOT
#undef DOT512
#undef SCALED_ADD
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl"))), apply_to = function)
#define KERNEL(name) avx512_##name
// vpmaddubsw cannot saturate here: 2 * 15 * 127 (q4) and 2 * 128 * 127 (q8_0's |q|) fit in int16.
#define DOT(acc, u, s) _mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1)))
#define SCALED_ADD(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#define KERNEL_MASKS
#include "kernel_body.h"
#undef KERNEL_MASKS
#undef KERNEL
#undef DOT
#undef SCALED_ADD
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avxvnni"))), apply_to = function)
#define KERNEL(name) avxvnni_##name
#define DOT(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
#define SCALED_ADD(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#define KERNEL_EXACT_DOT
#include "kernel_body.h"
#undef KERNEL_EXACT_DOT
#undef KERNEL
#undef DOT
#undef SCALED_ADD
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#define KERNEL(name) avx2_##name
// vpmaddubsw cannot saturate here: 2 * 15 * 127 (q4) and 2 * 128 * 127 (q8_0's |q|) fit in int16.
#define DOT(acc, u, s) _mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1)))
#define SCALED_ADD(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "kernel_body.h"
#undef KERNEL
#undef DOT
#undef SCALED_ADD
#pragma clang attribute pop

static int cpu_has(const char *isa) {
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avxvnni") == 0) return avx2 && __builtin_cpu_supports("avxvnni");
    if (strcmp(isa, "avx512") == 0) return avx512;
    if (strcmp(isa, "avx512vnni") == 0) return avx512 && __builtin_cpu_supports("avx512vnni");
    return 0;
}
#endif

/// The kernels of `isa` if the CPU runs it (returns 1).
static int kernels_for(const char *isa, kernel_set *set) {
    if (strcmp(isa, "portable") == 0) { *set = portable_kernels; return 1; }
#if defined(__x86_64__) && defined(__clang__)
    if (!cpu_has(isa)) return 0;
#define SET(prefix)                                                                                                       \
    (kernel_set){prefix##_q4_0, prefix##_q4_1, prefix##_q5_0, prefix##_q5_1, prefix##_q8_0, prefix##_q4_K, prefix##_q5_K, \
                 prefix##_q6_K, prefix##_q4_0_rows8, prefix##_quantize_q8, prefix##_quantize_q8_K}
    if (strcmp(isa, "avx512vnni") == 0) { *set = SET(avx512vnni); return 1; }
    if (strcmp(isa, "avx512") == 0) { *set = SET(avx512); return 1; }
    if (strcmp(isa, "avxvnni") == 0) { *set = SET(avxvnni); return 1; }
    *set = SET(avx2);
#undef SET
    return 1;
#else
    return 0;
#endif
}

static int select_kernels(const char *isa) {
    if (!kernels_for(isa, &chosen)) return 0;
    chosen_isa = isa;
    return 1;
}

static matvec_fn kernel_of(const kernel_set *set, int type) {
    switch (type) {
    case 2: return set->q4_0;
    case 3: return set->q4_1;
    case 6: return set->q5_0;
    case 7: return set->q5_1;
    case 8: return set->q8_0;
    case 12: return set->q4_K;
    case 13: return set->q5_K;
    case 14: return set->q6_K;
    case HITCH_Q4_0_ROWS8: return set->q4_0_rows8;
    default: return NULL;
    }
}

hitch_matvec_fn hitch_kernel(const char *isa, int type) {
    kernel_set set;
    if (!kernels_for(isa, &set)) return NULL;
    return kernel_of(&set, type);
}

hitch_matvec_fn hitch_matvec_for_type(int type) { return kernel_of(&chosen, type); }

hitch_quantize_fn hitch_quantizer_q8_K(const char *isa) {
    kernel_set set;
    return kernels_for(isa, &set) ? set.quantize_q8_K : NULL;
}

hitch_quantize_fn hitch_quantizer_q8(const char *isa) {
    kernel_set set;
    return kernels_for(isa, &set) ? set.quantize_q8 : NULL;
}

void hitch_quantize_q8(const float *x, long count, const hitch_q8_activations *out) { chosen.quantize_q8(x, count, out); }
void hitch_quantize_q8_K(const float *x, long count, const hitch_q8_activations *out) { chosen.quantize_q8_K(x, count, out); }

/// Every version, best first (the order `HITCH_KERNELS_ISA` caps).
static const char *const versions[] = {"avx512vnni", "avx512", "avxvnni", "avx2", "portable"};
static const char *unknown_cap = NULL;

/// The best version the CPU runs, at most `HITCH_KERNELS_ISA` when that names one (so each
/// version's speed can be measured on one machine), chosen before main; never written again.
__attribute__((constructor)) static void choose_kernels(void) {
    const char *cap = getenv("HITCH_KERNELS_ISA");
    size_t first = 0;
    if (cap && *cap) {
        first = sizeof versions / sizeof *versions;
        for (size_t i = 0; i < sizeof versions / sizeof *versions; i++) {
            if (strcmp(cap, versions[i]) == 0) first = i;
        }
        if (first == sizeof versions / sizeof *versions) { unknown_cap = cap; first = 0; }
    }
    for (size_t i = first; i < sizeof versions / sizeof *versions; i++) {
        if (select_kernels(versions[i])) break;
    }
#if defined(__x86_64__) && defined(__clang__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("fma")) { chosen_swiglu = fma_swiglu; chosen_softmax = fma_softmax; }
#endif
}

const char *hitch_kernels_unknown_cap(void) { return unknown_cap; }

#define ENTRY(type)                                                                                            \
    void hitch_matvec_##type(const void *w, size_t rb, long rows, long blocks, const hitch_q8_activations *x, float *y) { \
        chosen.type((const uint8_t *)w, rb, rows, blocks, x, y);                                              \
    }
ENTRY(q4_0)
ENTRY(q4_1)
ENTRY(q5_0)
ENTRY(q5_1)
ENTRY(q8_0)
ENTRY(q4_K)
ENTRY(q5_K)
ENTRY(q6_K)
#undef ENTRY
const char *hitch_kernels_isa(void) { return chosen_isa; }
