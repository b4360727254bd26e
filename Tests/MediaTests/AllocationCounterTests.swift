import CAllocationCounter
import Glibc
import XCTest

/// The allocation counter must be able to fail: these prove the interposed malloc family
/// is the one the Swift runtime and C code in this test binary call.
final class AllocationCounterTests: XCTestCase {
    final class Box {
        var value: Int
        init(_ value: Int) { self.value = value }
    }

    /// Keeps the optimizer from eliding a malloc/free pair whose memory is never used
    /// (LLVM removes those in release builds).
    @_optimize(none)
    func keep(_ pointer: UnsafeMutableRawPointer?) {}

    @inline(never)
    func makeBoxes(_ count: Int) -> [Box] { (0..<count).map { Box($0) } }

    func testAClassAllocatedOnACountingThreadIsCounted() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        sb_alloc_count_enable_this_thread(true)
        let before = sb_alloc_count_read()
        let boxes = makeBoxes(10)
        let after = sb_alloc_count_read()
        sb_alloc_count_enable_this_thread(false)
        // 10 objects + the array's buffer.
        XCTAssertGreaterThanOrEqual(after - before, 11)
        XCTAssertEqual(boxes.map(\.value).reduce(0, +), 45)
    }

    /// Allocations `work` makes on this thread with counting on.
    func counted(_ work: () -> Void) -> UInt64 {
        sb_alloc_count_enable_this_thread(true)
        let before = sb_alloc_count_read()
        work()
        let after = sb_alloc_count_read()
        sb_alloc_count_enable_this_thread(false)
        return after - before
    }

    func testAlignedCAndReallocAllocationsAreCounted() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        // Alignment above malloc's 16 bytes: the Swift runtime's aligned path.
        var aligned: UnsafeMutableRawPointer?
        XCTAssertEqual(counted { aligned = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 64); keep(aligned) }, 1, "aligned")
        var zeroed: UnsafeMutableRawPointer?
        XCTAssertEqual(counted { zeroed = calloc(4, 16); keep(zeroed) }, 1, "calloc")
        var grown: UnsafeMutableRawPointer?
        XCTAssertEqual(counted { grown = realloc(zeroed, 4_096); keep(grown) }, 1, "realloc")
        var viaPOSIX: UnsafeMutableRawPointer?
        var result: Int32 = -1
        XCTAssertEqual(counted { result = posix_memalign(&viaPOSIX, 128, 64); keep(viaPOSIX) }, 1, "posix_memalign")
        XCTAssertEqual(result, 0)
        XCTAssertEqual(Int(bitPattern: viaPOSIX) % 128, 0)
        XCTAssertEqual(Int(bitPattern: aligned) % 64, 0)
        aligned?.deallocate()
        free(grown)
        free(viaPOSIX)
    }

    func testAThreadThatDidNotEnableCountingIsNotCounted() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        XCTAssertFalse(sb_alloc_count_is_enabled_this_thread())
        let before = sb_alloc_count_read()
        let boxes = makeBoxes(100)
        XCTAssertEqual(sb_alloc_count_read(), before)
        XCTAssertEqual(boxes.count, 100)
    }

    func testBacktracesOfCountedAllocationsAreRecorded() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        sb_alloc_backtrace_arm(2)
        sb_alloc_count_enable_this_thread(true)
        let boxes = makeBoxes(3)
        sb_alloc_count_enable_this_thread(false)
        XCTAssertEqual(sb_alloc_backtrace_recorded(), 0, "this thread did not ask for stacks")
        sb_alloc_backtrace_this_thread(true)
        sb_alloc_count_enable_this_thread(true)
        let more = makeBoxes(3)
        sb_alloc_count_enable_this_thread(false)
        sb_alloc_backtrace_this_thread(false)
        XCTAssertEqual(sb_alloc_backtrace_recorded(), 2)
        var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 32)
        XCTAssertGreaterThan(sb_alloc_backtrace_frames(0, &frames, 32), 2)
        sb_alloc_backtrace_arm(0)
        XCTAssertEqual(boxes.count + more.count, 6)
    }
}
