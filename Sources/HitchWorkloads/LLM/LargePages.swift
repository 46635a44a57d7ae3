// Large read-mostly buffers (weight planes, the bandwidth probe's arrays) on 2 MB pages where the
// kernel allows it (Linux transparent huge pages in "madvise" mode). With 4 KB pages a pass over
// the weights takes a TLB miss every 4 KB and the hardware prefetchers stop at every page boundary;
// decode speed then varied from run to run with how the pages happened to fall.

#if canImport(Glibc)
import Glibc
#endif

enum LargePages {
    static let hugePageBytes = 2 << 20

    /// Zero-filled on first touch; free with `deallocate`. Buffers under a huge page get ordinary
    /// 64-byte-aligned memory.
    static func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        let size = max(byteCount, 64)
        guard size >= hugePageBytes else { return UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64) }
        var pointer: UnsafeMutableRawPointer?
        let rounded = (size + hugePageBytes - 1) / hugePageBytes * hugePageBytes
        guard posix_memalign(&pointer, hugePageBytes, rounded) == 0, let pointer else {
            fatalError("out of memory allocating \(rounded) bytes")
        }
        #if os(Linux)
        // Advice only: where huge pages are off or exhausted, the buffer keeps 4 KB pages.
        _ = madvise(pointer, rounded, MADV_HUGEPAGE)
        #endif
        return pointer
    }

    static func deallocate(_ pointer: UnsafeMutableRawPointer, byteCount: Int) {
        if max(byteCount, 64) >= hugePageBytes { free(pointer) } else { pointer.deallocate() }
    }
}
