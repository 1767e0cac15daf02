/**
 * Test-only schema exercising every scalar type, every map key type, enums (with a negative value),
 * repeated fields, oneofs, proto3 `optional` and a recursive message, for the codec's unit tests.
 */
import protobuf from "protobufjs";

/** The .proto source of the test schema (package `tbench.test`). */
export const ALL_TYPES_PROTO = `
syntax = "proto3";
package tbench.test;

enum Color {
  COLOR_UNSPECIFIED = 0;
  RED = 1;
  GREEN = 2;
  BELOW_ZERO = -1;
}

message Scalars {
  double d = 1;
  float f = 2;
  int32 i32 = 3;
  uint32 u32 = 4;
  sint32 s32 = 5;
  fixed32 fx32 = 6;
  sfixed32 sfx32 = 7;
  int64 i64 = 8;
  uint64 u64 = 9;
  sint64 s64 = 10;
  fixed64 fx64 = 11;
  sfixed64 sfx64 = 12;
  bool b = 13;
  string s = 14;
  bytes by = 15;
  Color color = 16;
}

message Lists {
  repeated double d = 1;
  repeated float f = 2;
  repeated int32 i32 = 3;
  repeated uint32 u32 = 4;
  repeated sint64 s64 = 5;
  repeated uint64 u64 = 6;
  repeated bool b = 7;
  repeated string s = 8;
  repeated bytes by = 9;
  repeated Color color = 10;
  repeated Scalars msgs = 11;
}

message Maps {
  map<string, int32> string_int = 1;
  map<int32, string> int_string = 2;
  map<int64, Scalars> int64_msg = 3;
  map<uint32, Color> uint_enum = 4;
  map<bool, bytes> bool_bytes = 5;
  map<sint64, double> sint_double = 6;
  map<fixed32, bool> fixed_bool = 7;
  map<string, Scalars> string_msg = 8;
  map<uint64, float> uint64_float = 9;
}

message Node {
  string name = 1;
  Node child = 2;
  repeated Node children = 3;
  oneof choice {
    int32 number = 4;
    string text = 5;
    Scalars scalars = 6;
  }
  optional int32 maybe = 7;
}

message All {
  Scalars scalars = 1;
  Lists lists = 2;
  Maps maps = 3;
  Node node = 4;
  Color color = 5;
}
`;

let root: protobuf.Root | undefined;

/** A message type of the test schema, for example `All` or `Scalars`. */
export function allTypesType(name: "All" | "Scalars" | "Lists" | "Maps" | "Node"): protobuf.Type {
  root ??= protobuf.parse(ALL_TYPES_PROTO, { keepCase: true }).root;
  return root.lookupType(`tbench.test.${name}`);
}
