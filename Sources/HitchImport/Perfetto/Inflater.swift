import CZlib

// Perfetto's `compressed_packets` are deflate streams (zlib-wrapped, as Perfetto's compressor
// writes them); the system zlib inflates them. Raw deflate is accepted too.
enum Inflater {
    /// The inflated bytes, or nil when the stream is corrupt, truncated or would exceed `limit`.
    static func inflate(_ input: UnsafeBufferPointer<UInt8>, limit: Int) -> [UInt8]? {
        guard let base = input.baseAddress, !input.isEmpty else { return nil }
        // 15 + 32: zlib or gzip header, detected; a raw stream is retried with -15.
        if let output = run(base, input.count, windowBits: 15 + 32, limit: limit) { return output }
        return run(base, input.count, windowBits: -15, limit: limit)
    }

    private static func run(_ base: UnsafePointer<UInt8>, _ count: Int, windowBits: Int32, limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        stream.next_in = UnsafeMutablePointer(mutating: base)
        stream.avail_in = UInt32(clamping: count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                return CZlib.inflate(&stream, Z_NO_FLUSH)
            }
            let produced = chunk.count - Int(stream.avail_out)
            output.append(contentsOf: chunk[0..<produced])
            if output.count > limit { return nil }
            if status == Z_STREAM_END { return output }
            guard status == Z_OK else { return nil }
            if stream.avail_in == 0 && produced == 0 { return nil }   // truncated
        }
    }
}
