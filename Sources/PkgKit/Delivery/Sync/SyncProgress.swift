/// How far a whole sync run has got: one value for every phase and every product of the run,
/// whose `fraction` only ever rises and is 1 when the run is over.
///
/// The bytes are the run's work: for each product to update, its package's bytes to download
/// (a delta's ranges, or the whole package, of which a download an earlier run left counts as
/// done already) plus the package bytes its install reads. They are estimated from the catalog
/// before any product is touched and made exact as each product's plan becomes known, so
/// `bytesTotal` may move either way while the run goes on (a delta that turns out smaller, a
/// product that fails and leaves its remaining bytes out); `fraction` is `bytesDone / bytesTotal`
/// held from ever going back (when the total grows it waits for the work to catch up), below 1
/// until the run's last value (phase `finished`), where it is 1, whatever the outcome: the report
/// says how the run went.
///
/// Values come in the order they were made, from `SyncRun/progress` or the callback of
/// `SyncClient/sync(_:progress:)`; a new one is made when the phase or product changes, a file
/// is written or the fraction rises by a thousandth, not for every byte.
public struct SyncProgress: Sendable, Equatable {
    /// What the run is doing.
    public enum Phase: String, Sendable {
        /// Fetching the catalog (and its signature).
        case catalog
        /// Downloading a package, or the parts of it that changed.
        case downloading
        /// Reading the downloaded package, verifying it and writing the version folder.
        case installing
        /// The run is over (the last value): `fraction` is 1.
        case finished
    }

    /// What the run is doing.
    public var phase: Phase
    /// The product concerned (nil while fetching the catalog, and once finished).
    public var productIdentifier: String?
    /// Bytes of the run's work done: downloaded, and read by the installs.
    public var bytesDone: Int64
    /// Bytes of the run's work in all, as far as it is known (0 until a product needs an update).
    public var bytesTotal: Int64
    /// How much of the run is done, 0 to 1; never goes back, and is 1 only in the last value.
    public var fraction: Double
    /// Files written into new version folders so far, over every product of the run.
    public var filesDone: Int
    /// Files the new version folders hold in all (from the catalog's entries).
    public var filesTotal: Int

    /// A value of the run.
    public init(phase: Phase, productIdentifier: String?, bytesDone: Int64 = 0, bytesTotal: Int64 = 0, fraction: Double = 0,
                filesDone: Int = 0, filesTotal: Int = 0) {
        self.phase = phase
        self.productIdentifier = productIdentifier
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.fraction = fraction
        self.filesDone = filesDone
        self.filesTotal = filesTotal
    }
}
