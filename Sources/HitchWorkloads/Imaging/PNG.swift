// PNG encode/decode for 8-bit RGB, RGBA and greyscale images: chunks with CRCs, zlib-compressed
// IDAT, and all five scanline filters (the encoder picks one per row by the minimum-sum heuristic).

/// Pixels in memory: 8-bit RGBA, row-major, no padding.
public struct RGBAImage: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 4, "RGBA buffer size must be width * height * 4")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public init(width: Int, height: Int) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 4))
    }
}

public enum PNGError: Error, Equatable, CustomStringConvertible {
    case notPNG
    case truncated(byteOffset: Int)
    case badChunkCRC(type: String, byteOffset: Int)
    case unsupported(String)
    case badImage(String)
    case zlib(ZlibError)

    public var description: String {
        switch self {
        case .notPNG: "not a PNG file (bad signature)"
        case .truncated(let offset): "PNG truncated at byte \(offset)"
        case .badChunkCRC(let type, let offset): "PNG chunk \(type) at byte \(offset) has a bad CRC"
        case .unsupported(let what): "unsupported PNG: \(what)"
        case .badImage(let why): "bad PNG image: \(why)"
        case .zlib(let error): "PNG image data: \(error)"
        }
    }
}

public enum PNG {
    static let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]

    /// Encodes as 8-bit RGBA (color type 6).
    public static func encode(_ image: RGBAImage) -> [UInt8] {
        let bytesPerPixel = 4
        let stride = image.width * bytesPerPixel
        var filtered = [UInt8]()
        filtered.reserveCapacity((stride + 1) * image.height)
        var candidate = [UInt8](repeating: 0, count: stride)
        image.pixels.withUnsafeBufferPointer { pixels in
            for row in 0..<image.height {
                let current = UnsafeBufferPointer(rebasing: pixels[(row * stride)..<((row + 1) * stride)])
                let above = row > 0 ? UnsafeBufferPointer(rebasing: pixels[((row - 1) * stride)..<(row * stride)]) : nil
                var bestFilter: UInt8 = 0
                var bestScore = Int.max
                var best = [UInt8]()
                for filter in UInt8(0)...4 {
                    var score = 0
                    for index in 0..<stride {
                        let left = index >= bytesPerPixel ? current[index - bytesPerPixel] : 0
                        let up = above?[index] ?? 0
                        let upperLeft = (index >= bytesPerPixel ? above?[index - bytesPerPixel] : nil) ?? 0
                        let predicted: UInt8 = switch filter {
                        case 0: 0
                        case 1: left
                        case 2: up
                        case 3: UInt8((Int(left) + Int(up)) / 2)
                        default: paeth(left, up, upperLeft)
                        }
                        let value = current[index] &- predicted
                        candidate[index] = value
                        score += Int(Int8(bitPattern: value).magnitude)
                    }
                    if score < bestScore {
                        bestScore = score
                        bestFilter = filter
                        best = candidate
                    }
                }
                filtered.append(bestFilter)
                filtered.append(contentsOf: best)
            }
        }
        var header = [UInt8]()
        appendBigEndian(UInt32(image.width), to: &header)
        appendBigEndian(UInt32(image.height), to: &header)
        header.append(contentsOf: [8, 6, 0, 0, 0])  // depth 8, RGBA, deflate, adaptive filtering, no interlace
        var file = signature
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", Zlib.deflate(filtered), to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    /// Decodes an 8-bit greyscale, grey+alpha, RGB or RGBA non-interlaced PNG to RGBA.
    public static func decode(_ file: [UInt8]) throws -> RGBAImage {
        guard file.count >= 8, Array(file[0..<8]) == signature else { throw PNGError.notPNG }
        var offset = 8
        var width = 0, height = 0, colorType: UInt8 = 0
        var compressed = [UInt8]()
        var sawHeader = false
        while true {
            guard offset + 8 <= file.count else { throw PNGError.truncated(byteOffset: offset) }
            let length = Int(readBigEndian(file, offset))
            let typeBytes = file[(offset + 4)..<(offset + 8)]
            let type = String(decoding: typeBytes, as: UTF8.self)
            guard length <= 0x7FFF_FFFF, offset + 12 + length <= file.count else {
                throw PNGError.truncated(byteOffset: offset)
            }
            let data = file[(offset + 8)..<(offset + 8 + length)]
            let storedCRC = readBigEndian(file, offset + 8 + length)
            guard CRC32.update(CRC32.checksum(typeBytes), data) == storedCRC else {
                throw PNGError.badChunkCRC(type: type, byteOffset: offset)
            }
            switch type {
            case "IHDR":
                guard length == 13 else { throw PNGError.badImage("IHDR length \(length)") }
                let start = data.startIndex
                width = Int(readBigEndian(file, start))
                height = Int(readBigEndian(file, start + 4))
                let depth = file[start + 8]
                colorType = file[start + 9]
                guard depth == 8 else { throw PNGError.unsupported("bit depth \(depth)") }
                guard [0, 2, 4, 6].contains(colorType) else { throw PNGError.unsupported("color type \(colorType)") }
                guard file[start + 12] == 0 else { throw PNGError.unsupported("interlaced") }
                guard width > 0, height > 0, width <= 16384, height <= 16384 else {
                    throw PNGError.badImage("size \(width)x\(height)")
                }
                sawHeader = true
            case "IDAT":
                compressed.append(contentsOf: data)
            case "IEND":
                guard sawHeader else { throw PNGError.badImage("no IHDR") }
                return try reconstruct(compressed, width: width, height: height, colorType: colorType)
            default:
                break  // ancillary chunks carry nothing we draw
            }
            offset += 12 + length
        }
    }

    private static func reconstruct(_ compressed: [UInt8], width: Int, height: Int, colorType: UInt8) throws -> RGBAImage {
        let channels = switch colorType { case 0: 1; case 2: 3; case 4: 2; default: 4 }
        let stride = width * channels
        let expected = (stride + 1) * height
        let raw: [UInt8]
        do {
            raw = try Zlib.inflate(compressed, expectedSize: expected, outputLimit: expected)
        } catch let error as ZlibError {
            throw PNGError.zlib(error)
        }
        guard raw.count == expected else { throw PNGError.badImage("image data is \(raw.count) bytes, expected \(expected)") }
        var scanlines = [UInt8](repeating: 0, count: stride * height)
        try raw.withUnsafeBufferPointer { raw in
            try scanlines.withUnsafeMutableBufferPointer { out in
                for row in 0..<height {
                    let filter = raw[row * (stride + 1)]
                    let source = row * (stride + 1) + 1
                    let target = row * stride
                    for index in 0..<stride {
                        let left = index >= channels ? out[target + index - channels] : 0
                        let up = row > 0 ? out[target - stride + index] : 0
                        let upperLeft = row > 0 && index >= channels ? out[target - stride + index - channels] : 0
                        let predicted: UInt8
                        switch filter {
                        case 0: predicted = 0
                        case 1: predicted = left
                        case 2: predicted = up
                        case 3: predicted = UInt8((Int(left) + Int(up)) / 2)
                        case 4: predicted = paeth(left, up, upperLeft)
                        default: throw PNGError.badImage("row \(row) has filter type \(filter)")
                        }
                        out[target + index] = raw[source + index] &+ predicted
                    }
                }
            }
        }
        if channels == 4 { return RGBAImage(width: width, height: height, pixels: scanlines) }
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for pixel in 0..<(width * height) {
            let from = pixel * channels
            switch channels {
            case 1, 2:
                rgba[pixel * 4] = scanlines[from]
                rgba[pixel * 4 + 1] = scanlines[from]
                rgba[pixel * 4 + 2] = scanlines[from]
                if channels == 2 { rgba[pixel * 4 + 3] = scanlines[from + 1] }
            default:
                rgba[pixel * 4] = scanlines[from]
                rgba[pixel * 4 + 1] = scanlines[from + 1]
                rgba[pixel * 4 + 2] = scanlines[from + 2]
            }
        }
        return RGBAImage(width: width, height: height, pixels: rgba)
    }

    @inline(__always)
    static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let p = Int(a) + Int(b) - Int(c)
        let pa = abs(p - Int(a)), pb = abs(p - Int(b)), pc = abs(p - Int(c))
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    private static func readBigEndian(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        appendBigEndian(UInt32(data.count), to: &file)
        file.append(contentsOf: typeBytes)
        file.append(contentsOf: data)
        appendBigEndian(CRC32.update(CRC32.checksum(typeBytes), data), to: &file)
    }
}

extension RGBAImage {
    /// Box-filter resize: each output pixel averages the source pixels it covers (when enlarging,
    /// that is the one nearest source pixel).
    public func resized(width newWidth: Int, height newHeight: Int) -> RGBAImage {
        precondition(newWidth > 0 && newHeight > 0)
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * 4)
        pixels.withUnsafeBufferPointer { source in
            for y in 0..<newHeight {
                let y0 = y * height / newHeight
                let y1 = max(y0 + 1, (y + 1) * height / newHeight)
                for x in 0..<newWidth {
                    let x0 = x * width / newWidth
                    let x1 = max(x0 + 1, (x + 1) * width / newWidth)
                    var sum = (0, 0, 0, 0)
                    for sy in y0..<y1 {
                        var index = (sy * width + x0) * 4
                        for _ in x0..<x1 {
                            sum.0 += Int(source[index]); sum.1 += Int(source[index + 1])
                            sum.2 += Int(source[index + 2]); sum.3 += Int(source[index + 3])
                            index += 4
                        }
                    }
                    let count = (y1 - y0) * (x1 - x0)
                    let target = (y * newWidth + x) * 4
                    out[target] = UInt8(sum.0 / count); out[target + 1] = UInt8(sum.1 / count)
                    out[target + 2] = UInt8(sum.2 / count); out[target + 3] = UInt8(sum.3 / count)
                }
            }
        }
        return RGBAImage(width: newWidth, height: newHeight, pixels: out)
    }
}
