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

    /// The first `size` bytes of the open file `fd` read into a read-only anonymous mapping on 2 MB
    /// pages (free it with `munmap(pointer, mappedBytes)`), so a pass over a model's weights streams
    /// as a generated model's planes do. nil, and nothing kept, where that cannot be had: not Linux,
    /// a file under a huge page, less than twice its size in available memory (the copy is not
    /// reclaimable as the file's page cache is), or a failed read; the caller then maps the file.
    static func readFile(fd: Int32, size: Int) -> (pointer: UnsafeRawPointer, mappedBytes: Int)? {
        #if os(Linux)
        guard size >= hugePageBytes, let available = ProbeSizing.availableMemoryBytes(), size <= available / 2 else { return nil }
        let rounded = (size + hugePageBytes - 1) / hugePageBytes * hugePageBytes
        // Reserve a huge page more than needed and trim both ends, so the mapping starts on a 2 MB boundary.
        guard let reserved = mmap(nil, rounded + hugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              reserved != MAP_FAILED else { return nil }
        let start = (Int(bitPattern: reserved) + hugePageBytes - 1) / hugePageBytes * hugePageBytes
        let head = start - Int(bitPattern: reserved)
        if head > 0 { munmap(reserved, head) }
        if hugePageBytes - head > 0 { munmap(reserved + head + rounded, hugePageBytes - head) }
        let pointer = reserved + head
        _ = madvise(pointer, rounded, MADV_HUGEPAGE)   // advice only: without huge pages the copy still works
        var done = 0
        while done < size {
            let count = pread(fd, pointer + done, min(size - done, 1 << 30), off_t(done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { munmap(pointer, rounded); return nil }
            done += count
        }
        guard mprotect(pointer, rounded, PROT_READ) == 0 else { munmap(pointer, rounded); return nil }
        return (UnsafeRawPointer(pointer), rounded)
        #else
        return nil
        #endif
    }
}
