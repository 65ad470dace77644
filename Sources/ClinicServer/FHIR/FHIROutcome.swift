import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Failures under /fhir/ as FHIR says them: an `OperationOutcome` with the issue type FHIR
/// names, our stable error code in `details.coding` and the message in the request's language,
/// with the same HTTP status as the API gives the same error (docs/FHIR.md, "Errors").
enum FHIROutcome {
    static let contentType = "application/fhir+json; charset=utf-8"
    static let prefix = "/fhir/"

    /// FHIR's issue type for one of our codes.
    static func issueType(code: String, status: Int) -> String {
        switch code {
        case "invalid_input": "invalid"
        case "not_logged_in", "invalid_credentials": "login"
        case "forbidden", "privacy_not_accepted": "forbidden"
        case "not_found": "not-found"
        case "slot_taken", "login_taken", "overlapping_appointment", "patient_unavailable", "hours_conflict": "conflict"
        case "slot_unavailable", "limit_reached", "invalid_transition", "too_late", "weak_password", "geocode_failed", "too_close":
            "business-rule"
        case "idempotency_key_reused", "precondition_failed": "conflict"
        case "account_locked", "rate_limited": "throttled"
        case "busy", "store_unreachable": "transient"
        case "method_not_allowed", "unsupported_media_type", "not_acceptable": "not-supported"
        case "too_large": "too-long"
        default: status >= 500 ? "exception" : "processing"
        }
    }

    static func resource(code: String, message: String, status: Int) -> FHIRJSON {
        .object([
            "resourceType": "OperationOutcome",
            "issue": [.object([
                "severity": .string(status >= 500 ? "fatal" : "error"),
                "code": .string(issueType(code: code, status: status)),
                "details": .object(["coding": [.object(["system": .string(FHIRResources.errorSystem), "code": .string(code)])],
                                    "text": .string(message)]),
                "diagnostics": .string(message),
            ])],
        ])
    }

    static func data(_ failure: APIFailure, _ language: Language) -> Data {
        let status = Int(failure.status.code)
        let message = status >= 500 ? Strings.text(.internalError, language, ["-"]) : failure.message(in: language)
        return resource(code: status >= 500 ? ClinicError.Code.internalError.rawValue : failure.code, message: message,
                        status: status).data
    }

    /// A response of the API's error shape said again as an OperationOutcome (the error
    /// middleware's answer on a FHIR path: same status and headers).
    static func rewrite(_ response: Response, _ failure: APIFailure, _ language: Language) -> Response {
        var headers = response.headers
        headers[.contentType] = contentType
        // The body is another one now: its length is the new body's, set when it is written.
        headers[.contentLength] = nil
        return Response(status: response.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data(failure, language))))
    }
}
