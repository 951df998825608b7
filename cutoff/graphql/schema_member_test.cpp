// Schema::member: data members, getters and functions of the parent read without a resolver
// call, written straight into the response when they map onto the field's type, and otherwise
// exactly as a resolver returning the same value would answer.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "cutoff/graphql/internal/executor_fixture_test.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql {
namespace {

using executor_test::Exec;

struct Size {
  int width = 0;
};
struct Item {
  std::string id;
  std::string_view name;
  int qty = 0;
  std::int64_t big = 0;
  unsigned small = 0;
  double price = 0;
  float weight = 0;
  bool ok = false;
  std::string color;
  Size size;
};
struct Other {
  std::string id;
};

constexpr const char* kSdl = R"(
  type Query { item: Item other: Item items: [Item!] }
  enum Color { RED GREEN }
  type Size { width: Int! }
  type Item {
    id: ID! name: String qty: Int! big: Int small: Int price: Float weight: Float ok: Boolean!
    color: Color size: Size! label: String
  }
)";

const Item& AnItem() {
  static const Item item{"i-1", "a \"quoted\" name\n", 3, 7, 9u, 2.5, 1.0f, true, "RED", Size{4}};
  return item;
}

class Member : public Exec {
 protected:
  // The Item type's fields as members, or as resolvers returning the same members.
  void Register(bool members) {
    Build(kSdl);
    Schema& s = *schema_;
    s.resolve("Query", "item", [](FieldContext&) { return Data::object(&AnItem()); });
    if (members) {
      s.member<&Item::id>("Item", "id");
      s.member<&Item::name>("Item", "name");
      s.member<&Item::qty>("Item", "qty");
      s.member<&Item::big>("Item", "big");
      s.member<&Item::small>("Item", "small");
      s.member<&Item::price>("Item", "price");
      s.member<&Item::weight>("Item", "weight");
      s.member<&Item::ok>("Item", "ok");
      s.member<&Item::color>("Item", "color");
      s.member<&Item::size>("Item", "size");
      s.member<&Size::width>("Size", "width");
      return;
    }
    auto field = [&](const char* type, const char* name, auto read) {
      s.resolve(type, name, [read](FieldContext& f) { return read(f.parent); });
    };
    field("Item", "id", [](const Data& p) { return Data::borrow(p.as<Item>()->id); });
    field("Item", "name", [](const Data& p) { return Data::borrow(p.as<Item>()->name); });
    field("Item", "qty", [](const Data& p) { return Data::from(p.as<Item>()->qty); });
    field("Item", "big", [](const Data& p) { return Data::from(p.as<Item>()->big); });
    field("Item", "small", [](const Data& p) { return Data::from(p.as<Item>()->small); });
    field("Item", "price", [](const Data& p) { return Data::from(p.as<Item>()->price); });
    field("Item", "weight", [](const Data& p) { return Data::from(static_cast<double>(p.as<Item>()->weight)); });
    field("Item", "ok", [](const Data& p) { return Data::from(p.as<Item>()->ok); });
    field("Item", "color", [](const Data& p) { return Data::borrow(p.as<Item>()->color); });
    field("Item", "size", [](const Data& p) { return Data::object(&p.as<Item>()->size); });
    field("Size", "width", [](const Data& p) { return Data::from(p.as<Size>()->width); });
  }
};

constexpr const char* kEveryField = "{ item { id name qty big small price weight ok color size { width } } }";

TEST_F(Member, AnswersAsResolversReturningTheMembersDo) {
  Register(false);
  const std::string by_resolvers = Json(kEveryField);
  Register(true);
  EXPECT_EQ(Json(kEveryField), by_resolvers);
  EXPECT_EQ(by_resolvers,
            R"({"data":{"item":{"id":"i-1","name":"a \"quoted\" name\n","qty":3,"big":7,"small":9,"price":2.5,)"
            R"("weight":1,"ok":true,"color":"RED","size":{"width":4}}}})");
}

TEST_F(Member, OnlyMembersThatMapOntoTheFieldsTypeAreWrittenStraight) {
  Register(true);
  auto writes = [&](const char* field) {
    return schema_->find_type("Item")->find_field(field)->read_member != nullptr;
  };
  EXPECT_TRUE(writes("id") && writes("name") && writes("qty") && writes("price") && writes("ok"));
  EXPECT_FALSE(writes("color"));  // an enum: serialized as a resolver's value would be
  EXPECT_FALSE(writes("size"));   // an object
  schema_->resolve("Item", "id", [](FieldContext&) { return Data::from("replaced"); });
  EXPECT_FALSE(writes("id"));  // a resolver set later replaces the member
  EXPECT_EQ(Json("{ item { id } }"), R"({"data":{"item":{"id":"replaced"}}})");
}

TEST_F(Member, AValueTheTypeCannotHoldIsTheFieldsErrorAsWithAResolver) {
  static const Item huge{"i-2",
                         "",
                         1,
                         std::int64_t{5'000'000'000},
                         std::numeric_limits<unsigned>::max(),
                         std::numeric_limits<double>::quiet_NaN(),
                         0,
                         false,
                         "BLUE",
                         Size{}};
  for (bool members : {false, true}) {
    Register(members);
    schema_->resolve("Query", "item", [](FieldContext&) { return Data::object(&huge); });
    EXPECT_EQ(
        Json("{ item { big small price color } }"),
        R"({"errors":[)"
        R"({"message":"Int cannot represent non 32-bit signed integer value: 5000000000","locations":[{"line":1,"column":10}],"path":["item","big"]},)"
        R"({"message":"Int cannot represent non 32-bit signed integer value: 4294967295","locations":[{"line":1,"column":14}],"path":["item","small"]},)"
        R"({"message":"Float cannot represent non numeric value: NaN","locations":[{"line":1,"column":20}],"path":["item","price"]},)"
        R"({"message":"Enum \"Color\" cannot represent value: \"BLUE\"","locations":[{"line":1,"column":26}],"path":["item","color"]}],)"
        R"("data":{"item":{"big":null,"small":null,"price":null,"color":null}}})")
        << (members ? "members" : "resolvers");
  }
}

TEST_F(Member, AParentOfAnotherTypeFailsTheField) {
  Register(true);
  static const Other other{"o-1"};
  schema_->resolve("Query", "other", [](FieldContext&) { return Data::object(&other); });
  const Response r = Run("{ other { id } }");
  EXPECT_EQ(r.data, R"({"other":null})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "The parent of id is not the C++ type its member belongs to.");
}

// A C++ class that shows its data through getters, and a function of it.
class Account {
 public:
  Account(std::string id, int cents, const Size* size) : id_(std::move(id)), cents_(cents), size_(size) {}
  const std::string& id() const noexcept { return id_; }
  int cents() const { return cents_; }
  std::string label() const { return "account " + id_; }  // made by the call: copied
  std::string_view kind() const { return "checking"; }
  bool open() const& noexcept { return cents_ >= 0; }
  const Size* size() const { return size_; }  // may be null
  const Size& first_size() const {            // a reference: the object lives in the parent (or here)
    static const Size none{0};
    return size_ ? *size_ : none;
  }

 private:
  std::string id_;
  int cents_ = 0;
  const Size* size_ = nullptr;
};
double Dollars(const Account& a) noexcept { return a.cents() / 100.0; }
std::int64_t Huge(const Account&) { return std::int64_t{5'000'000'000}; }

TEST_F(Member, GettersAndFunctionsOfTheParentAnswerAsResolversReturningTheirValueDo) {
  static const Size size{7};
  static const Account accounts[] = {{"a-1", 1250, &size}, {"a-2", -5, nullptr}};
  const char* sdl = R"(
    type Query { accounts: [Account!]! }
    type Size { width: Int! }
    type Account {
      id: ID! cents: Int! label: String kind: String open: Boolean! size: Size first: Size dollars: Float huge: Int
    }
  )";
  const char* query = "{ accounts { id cents label kind open size { width } first { width } dollars huge } }";
  std::string answers[2];
  for (bool members : {false, true}) {
    Build(sdl);
    Schema& s = *schema_;
    s.resolve("Query", "accounts", [](FieldContext&) {
      Data::List list;
      for (const Account& a : accounts) list.push_back(Data::object(&a));
      return Data::list(std::move(list));
    });
    if (members) {
      s.member<&Account::id>("Account", "id");
      s.member<&Account::cents>("Account", "cents");
      s.member<&Account::label>("Account", "label");
      s.member<&Account::kind>("Account", "kind");
      s.member<&Account::open>("Account", "open");
      s.member<&Account::size>("Account", "size");
      s.member<&Account::first_size>("Account", "first");
      s.member<&Dollars>("Account", "dollars");
      s.member<&Huge>("Account", "huge");
      s.member<&Size::width>("Size", "width");
      const Type& account = *schema_->find_type("Account");
      auto writes = [&](const char* field) { return account.find_field(field)->read_member != nullptr; };
      EXPECT_TRUE(writes("id") && writes("cents") && writes("kind") && writes("open") && writes("dollars"));
      EXPECT_FALSE(writes("label"));                    // a string made by the getter: it goes through Data, copied
      EXPECT_FALSE(writes("size") || writes("first"));  // objects
    } else {
      auto field = [&](const char* name, auto read) {
        s.resolve("Account", name, [read](FieldContext& f) { return read(*f.parent.as<Account>()); });
      };
      field("id", [](const Account& a) { return Data::borrow(a.id()); });
      field("cents", [](const Account& a) { return Data::from(a.cents()); });
      field("label", [](const Account& a) { return Data::from(a.label()); });
      field("kind", [](const Account& a) { return Data::borrow(a.kind()); });
      field("open", [](const Account& a) { return Data::from(a.open()); });
      field("size", [](const Account& a) { return a.size() ? Data::object(a.size()) : Data(); });
      field("first", [](const Account& a) { return Data::object(&a.first_size()); });
      field("dollars", [](const Account& a) { return Data::from(Dollars(a)); });
      field("huge", [](const Account& a) { return Data::from(Huge(a)); });
      s.resolve("Size", "width", [](FieldContext& f) { return Data::from(f.parent.as<Size>()->width); });
    }
    answers[members ? 1 : 0] = Json(query);
  }
  EXPECT_EQ(answers[1], answers[0]);
  EXPECT_EQ(
      answers[0],
      R"({"errors":[)"
      R"({"message":"Int cannot represent non 32-bit signed integer value: 5000000000","locations":[{"line":1,"column":78}],"path":["accounts",0,"huge"]},)"
      R"({"message":"Int cannot represent non 32-bit signed integer value: 5000000000","locations":[{"line":1,"column":78}],"path":["accounts",1,"huge"]}],)"
      R"("data":{"accounts":[)"
      R"({"id":"a-1","cents":1250,"label":"account a-1","kind":"checking","open":true,"size":{"width":7},"first":{"width":7},"dollars":12.5,"huge":null},)"
      R"({"id":"a-2","cents":-5,"label":"account a-2","kind":"checking","open":false,"size":null,"first":{"width":0},"dollars":-0.05,"huge":null}]}})");
}

}  // namespace
}  // namespace cutoff::graphql
