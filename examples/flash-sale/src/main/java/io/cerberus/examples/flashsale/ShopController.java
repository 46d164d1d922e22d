package io.cerberus.examples.flashsale;

import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /buy} (no lock), {@code GET /buy-locked} (under {@code @WithDistributedLock}),
 * {@code POST /pay} (a JSON {@code {"buyer":..,"cents":..}} with an {@code Idempotency-Key} header), {@code GET /stats}. A sale answers
 * 200, a sold-out stock 410 Gone.
 */
@RestController
class ShopController {
    private final Shop shop;
    private final Payments payments;

    ShopController(Shop shop, Payments payments) {
        this.shop = shop;
        this.payments = payments;
    }

    @GetMapping("/buy")
    ResponseEntity<String> buy() {
        return answer(shop.buyUnlocked());
    }

    @GetMapping("/buy-locked")
    ResponseEntity<String> buyLocked() {
        return answer(shop.buyLocked());
    }

    /** What a buyer pays: the body of {@code POST /pay}. */
    record Payment(String buyer, long cents) {}

    @PostMapping("/pay")
    Payments.Receipt pay(@RequestBody Payment payment, @RequestHeader("Idempotency-Key") String key) {
        return payments.charge(payment.buyer(), payment.cents(), key);
    }

    @GetMapping("/stats")
    Map<String, Long> stats() {
        return Map.of("stock", shop.stock(), "sold", shop.sold(), "charges", payments.charges());
    }

    private static ResponseEntity<String> answer(boolean sold) {
        return sold
                ? ResponseEntity.ok("sold\n")
                : ResponseEntity.status(HttpStatus.GONE).body("sold out\n");
    }
}
