#ifndef HITCH_KERNELS_H
#define HITCH_KERNELS_H

// The integer dot-product kernels of the decode workload for weights in ggml's block layout (q4_0,
// q4_1, q5_0, q5_1, q8_0 and the K-quants q4_K, q5_K, q6_K, read in place from a GGUF mapping)
// against activations quantized to int8 as ggml does (blocks of 32 for the first five, of 256 for
// the K-quants).
// x86 has no portable way to ask for vpdpbusd from Swift, so these are C with intrinsics: each kernel
// is compiled for AVX-512 with VNNI, AVX-512, AVX-VNNI and AVX2 (function target attributes, no build
// flags) and the best the CPU reports is chosen once at load time; elsewhere a portable C version
// runs. Every version computes the same integer lanes as ggml's vec_dot and adds them as floats in
// the same order, so all versions give the same floats, bit for bit; they differ from llama.cpp's
// only by the order of the float additions (none for the K-quants, which follow llama.cpp's).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Activations quantized in blocks of 32, as ggml's q8_0 / q8_1.
typedef struct {
    /// The int8 values (32 per block).
    int8_t *values;
    /// Per block: the scale max|x| / 127, rounded to f16 (as ggml stores it), as a float.
    float *scales;
    /// Per block: f16(scale * sum of the block's values) as a float (ggml's q8_1 `s`; q4_1 needs it).
    float *sums;
    /// Per block, 8 lanes: -8 times the sum of values 4i..4i+3 (q4_0's offset, in the kernels' lane order).
    int32_t *offsets;
    /// Per block: -8 times the sum of its 32 values (q4_0's offset for a whole block: the interleaved
    /// q4_0 kernel adds it to every row's exact sum).
    int32_t *block_offsets;
    /// The K-quants' form (ggml's q8_K): int8 values in blocks of 256 with a float scale
    /// (max|x| / 127, signed as the value of largest magnitude), and per block the sums of its 16
    /// runs of 16 values.
    int8_t *k_values;
    float *k_scales;
    int16_t *k_sums;
    /// Nonzero when this vector is a row of a batched prompt that ggml multiplies by another path
    /// than one token's, summing the same integer products in another float order:
    /// `q4_K_gemm`: repacked q4_K in its gemm (prompt rows in groups of four), one float step per
    /// pair of sub-blocks instead of per block;
    /// `q6_K_tiled`: q6_K in its tiled matmul (prompts of eight rows or more), per block the exact
    /// integer sum times the weight scale, fused by the activation scale into the total.
    int32_t q4_K_gemm;
    int32_t q6_K_tiled;
} hitch_q8_activations;

/// Quantizes `count` floats (a multiple of 32) into `out`, as ggml's quantize_row_q8_1 (AVX2 path:
/// scale = max|x| / 127, values = round-to-nearest-even(x * 127 / max|x|)).
void hitch_quantize_q8(const float *x, long count, const hitch_q8_activations *out);

/// Quantizes `count` floats (a multiple of 256) into the `k_` fields of `out`, as ggml's
/// quantize_row_q8_K: scale = max / -127 for the value `max` of largest magnitude, values =
/// round-to-nearest-even(x / scale) capped at 127.
void hitch_quantize_q8_K(const float *x, long count, const hitch_q8_activations *out);

/// y[r] = dot(row r, x) for r in [0, rows); row r starts at `weights + r * row_bytes` and holds
/// `blocks` ggml blocks (q4_0: 18 bytes, q4_1: 20, q5_0: 22, q5_1: 24, q8_0: 34, all of 32 weights;
/// q4_K: 144, q5_K: 176, q6_K: 210, of 256 weights).
void hitch_matvec_q4_0(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q4_1(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q5_0(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q5_1(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q8_0(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q4_K(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q5_K(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);
void hitch_matvec_q6_K(const void *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);


/// out[i] = silu(gate[i]) * up[i] with silu(x) = x / (1 + exp(-x)) and exp as ggml's AVX-512 build
/// approximates it (ggml_v_expf), bit for bit, so a GGUF model's feed-forward matches llama.cpp's.
void hitch_swiglu_ggml(const float *gate, const float *up, long count, float *out);

/// ggml_vec_soft_max_f32 of ggml's AVX-512 build: y[i] = exp(x[i] - max) with exp as
/// `hitch_swiglu_ggml`'s, runs of 16 summed as _mm512_reduce_add_ps does, into a double; the rest
/// with libm's expf. Returns the sum.
double hitch_softmax_ggml(const float *x, long count, float max, float *y);

/// Which version runs: "avx512vnni", "avx512", "avxvnni", "avx2" or "portable": the best the CPU
/// runs, or, when the environment variable HITCH_KERNELS_ISA names one of these, the best at or
/// below it in that order (to measure each version on one machine).
const char *hitch_kernels_isa(void);

/// HITCH_KERNELS_ISA's value when it names no version (it is then ignored), else NULL.
const char *hitch_kernels_unknown_cap(void);

/// Not a ggml type: q4_0 interleaved eight rows at a time (`hitch_interleave_q4_0_rows8`) and summed
/// in the order of llama.cpp's repacked q4_0 (q4_0x8), which it uses for every q4_0 matrix whose
/// rows are a multiple of 8 (not the token embedding): per row, each block's exact integer sum times
/// d * d_x fused into one float, where plain q4_0 (vec_dot's order) keeps eight lanes per row.
/// `hitch_kernel` and `hitch_matvec_for_type` take it as a type; its kernels read only the
/// interleaved layout, `rows` a multiple of 8 starting on a group of 8.
#define HITCH_Q4_0_ROWS8 1002

/// Rewrites `rows` (a multiple of 8) rows of `blocks` q4_0 blocks each (`row_bytes` = 18 * blocks
/// apart) in place into the interleaved layout, in the same bytes. Each group of 8 rows (8 *
/// row_bytes bytes) holds, per block, 144 bytes (llama.cpp's block_q4_0x8 holds the same): the
/// eight rows' f16 scales d, then 128 bytes of nibbles in four runs of 32, run c holding bytes
/// 4c..4c+3 of the block's 16 nibble bytes of row 0, then of row 1, ..., row 7 (so one 256-bit load
/// holds one 4-byte slice of all eight rows, a row per 32-bit lane). Returns 0 when it cannot
/// allocate its scratch (nothing changed).
int hitch_interleave_q4_0_rows8(void *weights, size_t row_bytes, long rows, long blocks);

/// Row `row` of an interleaved q4_0 matrix (as `hitch_interleave_q4_0_rows8` wrote it) back in
/// ggml's block layout: `blocks` blocks of 18 bytes into `out`.
void hitch_q4_0_rows8_row(const void *interleaved, size_t row_bytes, long row, long blocks, void *out);

typedef void (*hitch_matvec_fn)(const uint8_t *weights, size_t row_bytes, long rows, long blocks, const hitch_q8_activations *x, float *y);

/// The `isa` version ("avx512vnni", "avx512", "avxvnni", "avx2", "portable") of the kernel for ggml type
/// `type` (ggml ids: 2 = q4_0, 3 = q4_1, 6 = q5_0, 7 = q5_1, 8 = q8_0, 12 = q4_K, 13 = q5_K,
/// 14 = q6_K), or NULL when the CPU lacks it: tests compare every
/// version with the portable one without changing which one runs.
hitch_matvec_fn hitch_kernel(const char *isa, int type);

/// The chosen version of the kernel for ggml type `type` (ids as `hitch_kernel`), NULL for a type
/// without one.
hitch_matvec_fn hitch_matvec_for_type(int type);

typedef void (*hitch_quantize_fn)(const float *x, long count, const hitch_q8_activations *out);

/// The `isa` version of `hitch_quantize_q8_K` (every version gives the same bytes), or NULL when
/// the CPU lacks it: tests compare them as they compare the kernels.
hitch_quantize_fn hitch_quantizer_q8_K(const char *isa);

/// The `isa` version of `hitch_quantize_q8`, as `hitch_quantizer_q8_K`.
hitch_quantize_fn hitch_quantizer_q8(const char *isa);

#ifdef __cplusplus
}
#endif

#endif
