import Foundation

/// A port on 127.0.0.1 where nothing listens: bound to find a free one, then closed, so that a
/// connection to it is refused.
public func closedLoopbackPort() throws -> Int {
    let (descriptor, port) = try LoopbackListener.open()
    close(descriptor)
    return port
}
