import Hummingbird
import ClinicKit
