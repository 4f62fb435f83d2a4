/// One request as a test server answered it: what the tests assert on.
public struct ServedRequest: Sendable, Equatable, CustomStringConvertible {
    /// The request path (nginx: the request URI).
    public var path: String
    /// The Range header, nil when the request had none.
    public var range: String?
    /// The status answered.
    public var status: Int
    /// Body bytes actually sent.
    public var bodyBytesSent: Int

    /// A record with these values.
    public init(path: String, range: String?, status: Int, bodyBytesSent: Int) {
        self.path = path
        self.range = range
        self.status = status
        self.bodyBytesSent = bodyBytesSent
    }

    /// `GET path [range] -> status (bytes)`, for failure messages.
    public var description: String { "GET \(path) \(range ?? "-") -> \(status) (\(bodyBytesSent) bytes)" }
}
