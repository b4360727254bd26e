import CSocket
import Glibc

/// The preallocated arrays one recvmmsg(2)/sendmmsg(2) call works on: `capacity` slots of
/// `slotSize` bytes, one iovec and one sockaddr_storage per slot, and the mmsghdr array
/// pointing at them. Allocated once; nothing is allocated per datagram.
final class UDPMessageVector {
    let capacity: Int
    let slotSize: Int
    let slots: UnsafeMutableRawPointer
    let iovecs: UnsafeMutablePointer<iovec>
    let names: UnsafeMutablePointer<sockaddr_storage>
    let headers: UnsafeMutablePointer<sb_mmsghdr>

    /// `initialLength`: each iovec's starting length (a receive offers the whole slot, a
    /// send starts empty).
    init(capacity: Int, slotSize: Int, initialLength: Int) {
        self.capacity = max(1, capacity)
        self.slotSize = max(1, slotSize)
        slots = .allocate(byteCount: self.capacity * self.slotSize, alignment: 16)
        iovecs = .allocate(capacity: self.capacity)
        names = .allocate(capacity: self.capacity)
        names.initialize(repeating: sockaddr_storage(), count: self.capacity)
        headers = .allocate(capacity: self.capacity)
        for index in 0..<self.capacity {
            iovecs[index] = iovec(iov_base: slots + index * self.slotSize, iov_len: min(initialLength, self.slotSize))
            var header = sb_mmsghdr()
            header.msg_hdr.msg_name = UnsafeMutableRawPointer(names + index)
            header.msg_hdr.msg_iov = iovecs + index
            header.msg_hdr.msg_iovlen = 1
            headers[index] = header
        }
    }

    deinit {
        slots.deallocate()
        iovecs.deallocate()
        names.deallocate()
        headers.deallocate()
    }
}
