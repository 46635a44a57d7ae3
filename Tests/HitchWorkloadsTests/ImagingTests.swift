import Testing
import HitchAlgorithms
@testable import HitchWorkloads

@Suite struct ImagingTests {
    @Test func inflatesAKnownFixedHuffmanStream() throws {
        // zlib.compress(b"hello hello hello hello, hitch!", 9) from CPython's zlib.
        let stream: [UInt8] = [120, 218, 203, 72, 205, 201, 201, 87, 200, 64, 39, 117, 20, 50, 50, 75, 146, 51, 20, 1, 184, 50, 11, 46]
        #expect(try Zlib.inflate(stream) == Array("hello hello hello hello, hitch!".utf8))
    }

    @Test func inflatesAKnownDynamicHuffmanStream() throws {
        // zlib.compress(text, 9) of 200 bytes over "abcd": a dynamic-Huffman block (BTYPE 2).
        let text = "abbaadbabbabadcaabaababcbaabcaabacdbababcaacbaacaccaabbddabcdaabcbadadaaaaaaabacbcaabcababbabadabddacabbbabcabdbbabbabcbaaaaacbaaacaadaaaacacaabbcaabbabddabaaaaaabbaaaabaabacaaaadcaaacbabcbbbabcbaabbb"
        let stream: [UInt8] = [120, 218, 53, 142, 137, 17, 0, 33, 12, 2, 107, 229, 233, 191, 134, 3, 114, 170, 147, 135, 132, 29, 65, 2, 38, 146, 8, 11, 137, 121, 84, 211, 58, 117, 184, 186, 154, 160, 170, 180, 35, 25, 91, 116, 238, 157, 108, 207, 36, 60, 32, 186, 153, 150, 67, 208, 188, 65, 81, 56, 98, 166, 231, 23, 70, 94, 152, 141, 63, 148, 135, 46, 189, 85, 63, 89, 103, 32, 15, 149, 226, 3, 5, 112, 76, 108]
        #expect((stream[2] >> 1) & 3 == 2)
        #expect(try Zlib.inflate(stream) == Array(text.utf8))
    }

    @Test func deflateRoundTripsAndCompresses() throws {
        var random = SeededGenerator(seed: 7)
        let repetitive = (0..<20_000).map { UInt8(($0 / 7) % 13) }
        let noisy = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for data in [repetitive, noisy, [], [42]] {
            let compressed = Zlib.deflate(data)
            #expect(try Zlib.inflate(compressed) == data)
        }
        #expect(Zlib.deflate(repetitive).count < repetitive.count / 10)
    }

    @Test func corruptStreamsFailWithContext() {
        let good = Zlib.deflate(Array("some text some text some text".utf8))
        var badChecksum = good
        badChecksum[badChecksum.count - 1] ^= 0xFF
        #expect(throws: ZlibError.self) { try Zlib.inflate(badChecksum) }
        #expect(throws: ZlibError.truncated(byteOffset: 1)) { try Zlib.inflate([0x78]) }
        #expect(throws: ZlibError.self) { try Zlib.inflate(Array(good.prefix(good.count / 2))) }
        #expect(throws: ZlibError.outputTooLarge(limit: 4)) { try Zlib.inflate(good, outputLimit: 4) }
    }

    @Test func pngRoundTripKeepsEveryPixel() throws {
        let image = ThumbnailArt.draw(side: 40, seed: 3)
        let file = PNG.encode(image)
        #expect(Array(file.prefix(8)) == [137, 80, 78, 71, 13, 10, 26, 10])
        #expect(try PNG.decode(file) == image)
    }

    @Test func pngRejectsCorruption() {
        var file = PNG.encode(ThumbnailArt.draw(side: 8, seed: 1))
        #expect(throws: PNGError.notPNG) { try PNG.decode(Array(file.dropFirst())) }
        file[20] ^= 0x01  // inside IHDR's data: its CRC no longer matches
        #expect(throws: PNGError.badChunkCRC(type: "IHDR", byteOffset: 8)) { try PNG.decode(file) }
    }

    @Test func boxResizeAveragesBlocks() {
        // A 4x4 image of four 2x2 blocks resizes to their four averages.
        var image = RGBAImage(width: 4, height: 4)
        for y in 0..<4 {
            for x in 0..<4 {
                let value = UInt8((y / 2) * 100 + (x / 2) * 50 + (x % 2) * 2)
                let index = (y * 4 + x) * 4
                image.pixels[index] = value; image.pixels[index + 1] = value; image.pixels[index + 2] = value; image.pixels[index + 3] = 255
            }
        }
        let small = image.resized(width: 2, height: 2)
        #expect(small.pixels.enumerated().filter { $0.offset % 4 == 0 }.map(\.element) == [1, 51, 101, 151])
    }
}
