import Foundation

// A text's delivery report awaited (issue 56): the gateway's status read in ClinicKit
// (`TextController.reportOf`), the report recorded by the store in one statement.

/// The awaited delivery reports a `ClinicStore` offers.
public protocol TextReportsStore: Sendable {
    /// Records `report` on the text delivery `deliveryId` at `now`, unless a final report
    /// (delivered, failed, rejected) is there already: the network's reports of one text come in
    /// any order, and a replayed one cannot rewrite the outcome. Whether there is such a text
    /// delivery (false: none, or another purpose's).
    func recordReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) async throws -> Bool
}
