/// A command whose work only reads (validate, inspect, diff): an interrupted run has changed
/// nothing, and as there is nothing to clean up, it is given a second to stop.
protocol ReadOnlyCommand: ReportingCommand {}

extension ReadOnlyCommand {
    var leftWhenInterrupted: String { "nothing was changed" }
    var interruptionGrace: Double { 1 }
}
