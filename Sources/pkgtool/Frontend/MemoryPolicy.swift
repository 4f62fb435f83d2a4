#if os(Linux)
internal import CSyscalls
#endif

/// How the pkgtool process asks the C allocator to behave: a policy for the whole process, so it
/// is set here and not by the library, whose host may want its own.
enum MemoryPolicy {
    /// Large blocks (TOC tables, per-entry facts, write queues) are mapped and unmapped rather than
    /// carved from the heap, so memory freed between passes leaves the process instead of
    /// staying resident as holes, which on a large extract would add megabytes to the peak.
    static func apply() {
        #if os(Linux)
        _ = CSyscalls_fixMmapThreshold()
        #endif
    }
}
