import CHitchKernels
import Foundation
import HitchAlgorithms
import Testing
@testable import HitchWorkloads

/// A GGUF matrix of q4_0 tensors: the ones of a multiple of 8 rows interleaved in place on load,
/// multiplied in llama.cpp's repacked order whatever rows a pool chunk covers.
struct MappedMatrixTests {
    @Test("interleaved q4_0 segments give llama.cpp's repacked-order products in chunks that split their groups, and read back their rows")
    func interleavedSegments() throws {
        // "a" (12 rows) keeps ggml's layout; "b" (16 rows) starts at row 12, so the pool's chunks of 16
        // rows end inside its first group of 8.
        let columns = 512, aRows = 12, bRows = 16, rows = aRows + bRows, rowBytes = GGMLType.q4_0.rowBytes(columns: columns)
        var generator = SeededGenerator(seed: 21)
        let a = QuantizedKernelsTests.randomRows(.q4_0, rows: aRows, columns: columns, generator: &generator)
        let b = QuantizedKernelsTests.randomRows(.q4_0, rows: bRows, columns: columns, generator: &generator)
        var w = GGUFWriter()
        w.addTensor("a", dimensions: [columns, aRows], type: .q4_0, bytes: a)
        w.addTensor("b", dimensions: [columns, bRows], type: .q4_0, bytes: b)
        let path = try w.write("interleaved-q4_0")
        defer { unlink(path) }
        let file = try GGUFFile(path: path)
        let tensors = [file.tensor(named: "a")!, file.tensor(named: "b")!]
        let matrix = try MappedMatrix(file: file, tensors: tensors)
        #expect(matrix.segments.map(\.interleaved) == [false, true])
        #expect(rowsPerChunk(rows) == 16)
        let x = (0..<columns).map { _ in generator.nextSigned() }
        let xq = QuantizedVector(capacity: columns)
        x.withUnsafeBufferPointer { xq.quantize8($0.baseAddress!, count: columns) }
        let expected = try QuantizedKernelsTests.run(#require(hitch_kernel("portable", Int32(GGMLType.q4_0.rawValue))), a, rows: aRows,
                                                     columns: columns, type: .q4_0, xq)
            + QuantizedKernelsTests.rowsOfEightReference(b, rows: bRows, columns: columns, xq)
        let pool = WorkerPool(threadCount: 2)
        defer { pool.shutdown() }
        func product(_ matrix: MappedMatrix) -> [UInt32] {
            var y = [Float](repeating: .nan, count: rows)
            x.withUnsafeBufferPointer { xb in
                y.withUnsafeMutableBufferPointer { yb in
                    MatvecTask(placeholder: matrix, x: xb.baseAddress!, y: yb.baseAddress!, maxColumns: columns)
                        .run(matrix, x: xb.baseAddress!, y: yb.baseAddress!, pool: pool)
                }
            }
            return y.map(\.bitPattern)
        }
        #expect(product(matrix) == expected)
        // Every range of rows, group-aligned or not, gives the same products.
        for lower in [0, 12, 13, 15, 20] {
            for upper in [lower + 1, 21, 27, rows] where upper > lower {
                var y = [Float](repeating: .nan, count: rows)
                y.withUnsafeMutableBufferPointer { matrix.multiply(rows: lower..<upper, x: [], quantizedX: xq, y: $0.baseAddress!) }
                #expect(y[lower..<upper].map(\.bitPattern) == Array(expected[lower..<upper]), "rows \(lower)..<\(upper)")
                #expect(y[..<lower].allSatisfy(\.isNaN) && y[upper...].allSatisfy(\.isNaN), "rows \(lower)..<\(upper) wrote outside")
            }
        }
        // A second matrix over the same file takes the interleaved bytes as they are (not twice).
        #expect(product(try MappedMatrix(file: file, tensors: tensors)) == expected)
        // Rows read back as written.
        for (r, source) in [(3, a), (12, b), (19, b), (27, b)] {
            let local = r < aRows ? r : r - aRows
            var row = [Float](repeating: 0, count: columns), reference = [Float](repeating: 0, count: columns)
            row.withUnsafeMutableBufferPointer { matrix.dequantizeRow(r, into: $0.baseAddress!) }
            source.withUnsafeBytes { GGMLType.q4_0.dequantizeRow($0.baseAddress! + local * rowBytes, columns: columns, into: &reference) }
            #expect(row == reference, "row \(r)")
        }
    }
}
