// Gemma 3's forward pass of one token, in llama.cpp's order (src/models/gemma3.cpp): the embedding
// scaled by sqrt(dim); per layer RMSNorm, q|k|v, per-head RMSNorm of queries and keys, NeoX RoPE
// (the sliding window's base on local layers), queries scaled by 1/sqrt(headDim), attention (local
// layers over the last `window` positions), the output projection, RMSNorm, the residual; RMSNorm,
// GeGLU feed-forward, RMSNorm, the residual; then the final norm and the output head.

extension DecodeSession {
    func stepGemma3(token: Int, computeLogits: Bool) {
        let s = shape, w = weights
        let dim = s.dim, f = 4, headDim = s.headDim, queryDim = s.queryDim, kvDim = s.kvDim
        let rowBytes = w.embedding.rowByteCount
        op("embed", layer: -1, read: rowBytes, written: dim * f, flops: dim, weightBytes: rowBytes) {
            w.embedding.dequantizeRow(token, into: x)
            let scale = Float(dim).squareRoot()
            for i in 0..<dim { x[i] *= scale }
        }
        let ropeTable = position * headDim / 2
        let queryScale = 1 / Float(headDim).squareRoot()
        attention.scoreScale = 1   // the queries come scaled, as llama.cpp scales them before attention
        for (l, layer) in w.layers.enumerated() {
            let isLocal = w.slidingWindow?.isLocal[l] ?? false
            let first = isLocal ? max(0, position + 1 - w.slidingWindow!.positions) : 0
            let positions = position + 1 - first
            op("rmsnorm", layer: l, read: 2 * dim * f, written: dim * f, flops: 4 * dim, weightBytes: dim * f) {
                rmsNorm(x, gain: layer.attentionNorm, count: dim, epsilon: w.normEpsilon, into: normed)
            }
            op("qkv", layer: l, read: layer.qkv.byteCount + dim * f, written: s.qkvRows * f,
               flops: 2 * s.qkvRows * dim, weightBytes: layer.qkv.byteCount) {
                matvec.run(layer.qkv, x: normed, y: qkv, pool: pool)
            }
            op("qk-norm", layer: l, read: (queryDim + kvDim + 2 * headDim) * f, written: (queryDim + kvDim) * f,
               flops: 4 * (queryDim + kvDim), weightBytes: 2 * headDim * f) {
                for head in 0..<s.heads {
                    rmsNorm(qkv + head * headDim, gain: layer.queryNorm!, count: headDim, epsilon: w.normEpsilon, into: qkv + head * headDim)
                }
                for head in 0..<s.kvHeads {
                    let k = qkv + queryDim + head * headDim
                    rmsNorm(k, gain: layer.keyNorm!, count: headDim, epsilon: w.normEpsilon, into: k)
                }
            }
            op("rope", layer: l, read: (queryDim + 2 * kvDim + headDim) * f, written: (queryDim + 3 * kvDim) * f,
               flops: 3 * (queryDim + kvDim) + queryDim) {
                let cosines = (isLocal ? localCosines : self.cosines) + ropeTable
                let sines = (isLocal ? localSines : self.sines) + ropeTable
                applyRoPENeoX(qkv, heads: s.heads, headDim: headDim, cosines: cosines, sines: sines)
                applyRoPENeoX(qkv + queryDim, heads: s.kvHeads, headDim: headDim, cosines: cosines, sines: sines)
                for i in 0..<queryDim { qkv[i] *= queryScale }
                let queries = attention.tiledPrompt ? queryDim : 0   // as stepLlama
                roundToHalf(qkv + queries, count: s.qkvRows - queries)
                kvRow(keyCache, layer: l, position: position).update(from: qkv + queryDim, count: kvDim)
                kvRow(valueCache, layer: l, position: position).update(from: qkv + queryDim + kvDim, count: kvDim)
            }
            let kvBytes = 2 * positions * kvDim * f
            op("attention", layer: l, read: queryDim * f + kvBytes, written: queryDim * f,
               flops: 4 * s.heads * positions * headDim + 5 * s.heads * positions, kvBytes: kvBytes) {
                attention.query = UnsafePointer(qkv)
                attention.keys = UnsafePointer(kvRow(keyCache, layer: l, position: 0))
                attention.values = UnsafePointer(kvRow(valueCache, layer: l, position: 0))
                attention.output = normed
                attention.firstPosition = first
                attention.positions = position + 1
                pool.run(attention, chunkCount: s.heads)
            }
            op("attn-out", layer: l, read: layer.attentionOutput.byteCount + (queryDim + 2 * dim) * f, written: dim * f,
               flops: 2 * dim * queryDim + 5 * dim, weightBytes: layer.attentionOutput.byteCount + dim * f) {
                matvec.run(layer.attentionOutput, x: normed, y: projected, pool: pool)
                rmsNorm(projected, gain: layer.postAttentionNorm!, count: dim, epsilon: w.normEpsilon, into: projected)
                addInPlace(x, projected, count: dim)
            }
            op("rmsnorm", layer: l, read: 2 * dim * f, written: dim * f, flops: 4 * dim, weightBytes: dim * f) {
                rmsNorm(x, gain: layer.ffnNorm, count: dim, epsilon: w.normEpsilon, into: normed)
            }
            if l == w.layers.count - 1 { matvec.promptRow = nil }   // as stepLlama
            op("gate/up", layer: l, read: layer.gateUp.byteCount + dim * f, written: s.ffn * f,
               flops: 4 * s.ffn * dim + 10 * s.ffn, weightBytes: layer.gateUp.byteCount) {
                matvec.run(layer.gateUp, x: normed, y: hidden, pool: pool)
                geGLU(gate: hidden, up: hidden + s.ffn, count: s.ffn, into: gated)
            }
            op("down", layer: l, read: layer.down.byteCount + (s.ffn + 2 * dim) * f, written: dim * f,
               flops: 2 * dim * s.ffn + 5 * dim, weightBytes: layer.down.byteCount + dim * f) {
                matvec.run(layer.down, x: gated, y: projected, pool: pool)
                rmsNorm(projected, gain: layer.postFFNNorm!, count: dim, epsilon: w.normEpsilon, into: projected)
                addInPlace(x, projected, count: dim)
            }
        }
        position += 1
        guard computeLogits else { return }
        computeLogitsOfX()
    }
}
