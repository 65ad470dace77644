import Foundation

public enum AppointmentStatus: String, Sendable, CaseIterable, Codable {
    case scheduled
    case confirmed
    /// Checked in at the front desk (migration 11).
    case arrived
    /// The doctor started the visit (migration 11).
    case inProgress = "in_progress"
    case completed
    case cancelled
    case noShow = "no_show"

    /// Active appointments hold their slot.
    public var isActive: Bool { self == .scheduled || self == .confirmed || self == .arrived || self == .inProgress }

    /// What the patient may still move or cancel: not once checked in.
    public var isPatientChangeable: Bool { self == .scheduled || self == .confirmed }

    /// `isActive` as SQL, for queries on `appointments` (the same text as the partial unique
    /// indexes of migration 0001, so that SQLite can use them).
    public static let activeCondition = "status IN (" + allCases.filter(\.isActive).map { "'" + $0.rawValue + "'" }.joined(separator: ", ") + ")"
}

/// Codable: a front may keep an appointment as the answer to an `Idempotency-Key` and show it
/// later (FHIR's changes, whose answer is shown with its place read after the change).
public struct Appointment: Hashable, Sendable, Codable {

    public var id: Int64?
    /// Nil once the patient deleted their account: the clinic keeps the record.
    public var clientId: Int64?
    public var clinicId: Int64
    public var departmentId: Int64
    public var doctorId: Int64
    public var doctorName: String
    /// Instants, stored as UTC seconds.
    public var startsAt: Date
    public var endsAt: Date
    public var status: AppointmentStatus
    public var notes: String
    public var createdAt: Date
    public var updatedAt: Date
    /// The visit type it was booked for (migration 12), nil for a single slot.
    public var visitTypeId: Int64? = nil


}

extension AppointmentStatus {
    /// The status in words, in the language.
    public func text(_ language: Language) -> String {
        let key: MessageKey = switch self {
        case .scheduled: .statusScheduled
        case .confirmed: .statusConfirmed
        case .arrived: .statusArrived
        case .inProgress: .statusInProgress
        case .completed: .statusCompleted
        case .cancelled: .statusCancelled
        case .noShow: .statusNoShow
        }
        return Strings.text(key, language)
    }
}
